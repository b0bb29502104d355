// Command composecheck is `docker compose config` without Docker: it loads
// compose files with compose-go, the loader docker compose itself uses (the
// version pinned in go.mod is the one docker compose v2.40.3 ships), with the
// same steps: .env and OS-environment interpolation (so ${VAR:?message}
// fails), compose-spec schema validation, normalization, consistency checks,
// env_file resolution and container-name uniqueness. It prints the resolved
// project as JSON on stdout, or the loader's error on stderr and exits 1.
//
// Usage: composecheck [-project-dir DIR] [-env-file FILE] FILE [FILE...]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
)

func main() {
	projectDir := flag.String("project-dir", "", "project directory (default: the first file's directory)")
	envFile := flag.String("env-file", "", "interpolation variables from this file instead of <project-dir>/.env")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: composecheck [-project-dir DIR] [-env-file FILE] FILE [FILE...]")
		os.Exit(2)
	}
	var envFiles []string
	if *envFile != "" {
		envFiles = append(envFiles, *envFile)
	}
	if err := run(*projectDir, envFiles, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(projectDir string, envFiles []string, files []string) error {
	options, err := cli.NewProjectOptions(files,
		cli.WithWorkingDirectory(projectDir),
		cli.WithOsEnv,
		cli.WithEnvFiles(envFiles...),
		cli.WithDotEnv,
		cli.WithInterpolation(true),
		cli.WithResolvedPaths(true),
		cli.WithNormalization(true),
		cli.WithConsistency(true),
		cli.WithDiscardEnvFile,
	)
	if err != nil {
		return err
	}
	project, err := options.LoadProject(context.Background())
	if err != nil {
		return err
	}
	project, err = project.WithServicesEnvironmentResolved(true)
	if err != nil {
		return err
	}
	if err := project.CheckContainerNameUnicity(); err != nil {
		return err
	}
	content, err := project.MarshalJSON()
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(content, '\n'))
	return err
}
