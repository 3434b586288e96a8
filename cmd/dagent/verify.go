package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/dagent-dev/dagent/internal/jsonv"
	"github.com/dagent-dev/dagent/verify"
	"github.com/spf13/cobra"
)

func newVerify() *cobra.Command {
	var (
		input, result, depends string
		format                 string
	)
	cmd := &cobra.Command{
		Use:   "verify PREDICATE",
		Short: "Evaluate a verification predicate on sample data",
		Long: `Evaluate a verification predicate, as the runner does after a task's attempt,
on the data given: --input is data/input, --result is data/result, --depends
is data/depends (a JSON object of results by task id). --input and --result
take raw JSON; a value that is not JSON is taken as a string. PREDICATE is
the predicate's source, or - to read it from standard input.

Exit codes: 0 the predicate passed, 1 it failed (the diagnosis is printed),
2 it does not compile, failed while running, or the arguments are bad.
--format json prints {"passed": true}, {"passed": false, "diagnosis": "..."}
or {"error": "..."}. See docs/predicates.md for the language.`,
		Example: `  dagent verify '(> (count (get data/result "items")) 0)' --result '{"items": [1, 2]}'
  dagent verify '(= (get data/result "city") (get data/input "city"))' --input '{"city": "Oslo"}' --result '{"city": "Bergen"}'
  dagent verify --format json '(string? data/result)' --result 'plain text'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return fmt.Errorf("unknown format %q: use text or json", format)
			}
			out := &verifyOutput{w: cmd.OutOrStdout(), errw: cmd.ErrOrStderr(), json: format == "json"}
			src := args[0]
			if src == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return fmt.Errorf("read standard input: %w", err)
				}
				src = string(b)
			}
			var b verify.Bindings
			var err error
			if b.Input, err = jsonOrString(input); err != nil {
				return err
			}
			if b.Result, err = jsonOrString(result); err != nil {
				return err
			}
			if depends != "" {
				v, err := jsonv.DecodeBytes([]byte(depends))
				m, ok := v.(map[string]any)
				if err != nil || !ok {
					return fmt.Errorf("--depends must be a JSON object of results by task id, e.g. '{\"fetch\": {\"items\": []}}'")
				}
				b.Depends = m
			}
			p, err := verify.Compile(src)
			if err != nil {
				return out.fail(err)
			}
			v, err := p.Eval(cmd.Context(), b)
			if err != nil {
				return out.fail(err)
			}
			return out.verdict(v)
		},
	}
	cmd.Flags().StringVar(&input, "input", "", "the task's input (data/input): JSON, or text taken as a string")
	cmd.Flags().StringVar(&result, "result", "", "the task's output (data/result): JSON, or text taken as a string")
	cmd.Flags().StringVar(&depends, "depends", "", "the dependencies' outputs (data/depends): a JSON object by task id")
	cmd.Flags().StringVarP(&format, "format", "f", "text", "output format: text or json")
	return cmd
}

type verdictJSON struct {
	Version   int    `json:"version"`
	Passed    bool   `json:"passed"`
	Diagnosis string `json:"diagnosis,omitempty"`
}

// verifyOutput prints verdicts and errors as text or JSON.
type verifyOutput struct {
	w, errw io.Writer
	json    bool
}

func (o *verifyOutput) print(v any) error {
	return jsonv.Encode(o.w, v)
}

func (o *verifyOutput) verdict(v verify.Verdict) error {
	switch {
	case o.json && v.Passed:
		return o.print(verdictJSON{Version: docVersion, Passed: true})
	case o.json:
		if err := o.print(verdictJSON{Version: docVersion, Diagnosis: v.Diagnosis}); err != nil {
			return err
		}
	case v.Passed:
		_, err := fmt.Fprintln(o.w, "passed")
		return err
	default:
		if _, err := fmt.Fprintln(o.w, "failed:", v.Diagnosis); err != nil {
			return err
		}
	}
	return exitCode(exitInvalid)
}

// fail reports a predicate that did not compile or could not decide.
func (o *verifyOutput) fail(err error) error {
	if o.json {
		if perr := o.print(errorDoc{Version: docVersion, Error: err.Error(), ExitCode: exitUsage}); perr != nil {
			return perr
		}
	} else {
		fmt.Fprintln(o.errw, "dagent:", err)
	}
	return exitCode(exitUsage)
}

// jsonOrString reads a flag value as JSON, or as a string when it is not
// JSON. An empty value is nil.
func jsonOrString(s string) (any, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	if v, err := jsonv.DecodeBytes([]byte(s)); err == nil {
		return v, nil
	}
	return s, nil
}
