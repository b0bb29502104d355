; PHP extraction query. Capture convention: see README.md in this folder.

(namespace_definition
  name: (namespace_name) @package)

; ---- definitions
(class_declaration
  name: (name) @name) @definition.class

(interface_declaration
  name: (name) @name) @definition.interface

(trait_declaration
  name: (name) @name) @definition.trait

(enum_declaration
  name: (name) @name) @definition.enum

(function_definition
  name: (name) @name) @definition.function

(method_declaration
  name: (name) @name) @definition.method

; `const X = 1;` at top level or in a class (one symbol per element)
(const_declaration
  (const_element
    (name) @name) @definition.constant)

; ---- calls and constructor calls
(function_call_expression
  function: (name) @name
  arguments: (arguments) @arguments) @reference.call

(function_call_expression
  function: (qualified_name
    (name) @name .) @callee
  arguments: (arguments) @arguments) @reference.call

(member_call_expression
  object: (_) @receiver
  name: (name) @name
  arguments: (arguments) @arguments) @reference.call

(nullsafe_member_call_expression
  object: (_) @receiver
  name: (name) @name
  arguments: (arguments) @arguments) @reference.call

(scoped_call_expression
  scope: (_) @receiver
  name: (name) @name
  arguments: (arguments) @arguments) @reference.call

(object_creation_expression
  [
    (name) @name
    (qualified_name (name) @name .)
  ] @callee
  (arguments)? @arguments) @reference.call

; ---- imports: `use` clauses (the adapter flattens groups) and file includes
(namespace_use_declaration) @import.use

[
  (include_expression)
  (include_once_expression)
  (require_expression)
  (require_once_expression)
] @import.include

; ---- declared types: what a call on a name reaches (see README.md); locals keep their `$`
(simple_parameter type: (_) @type name: (variable_name) @name) @typed.local

(assignment_expression
  left: (variable_name) @name
  right: (object_creation_expression . [(name) (qualified_name)] @type)) @typed.local

(assignment_expression
  left: (variable_name) @name
  right: [
    (function_call_expression function: (_) @call)
    (scoped_call_expression) @call
  ]) @typed.local

(property_promotion_parameter type: (_) @type name: (variable_name (name) @name)) @typed.member

(property_declaration
  type: (_) @type
  (property_element name: (variable_name (name) @name))) @typed.member

(assignment_expression
  left: (member_access_expression
    object: (variable_name (name) @_this)
    name: (name) @name)
  right: (object_creation_expression . [(name) (qualified_name)] @type)
  (#eq? @_this "this")) @typed.member

[
  (method_declaration return_type: (_) @type)
  (function_definition return_type: (_) @type)
] @typed.return
