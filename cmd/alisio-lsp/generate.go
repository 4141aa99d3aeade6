package main

import (
	"fmt"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/spf13/cobra"

	"github.com/alisio-lsp/alisio-lsp/transcript/formats"
)

func (a *app) sessionsGenerateCommand() *cobra.Command {
	var messages, resultChars, hugeEvery int
	var seed uint64
	var format string
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "print a synthetic coding-agent transcript (for trying the tools without an API key)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			switch {
			case messages < 1 || messages > 10_000_000:
				return fmt.Errorf("--messages %d: give a number of messages from 1 to 10000000", messages)
			case resultChars < 1:
				return fmt.Errorf("--result-chars %d: give a size of 1 or more", resultChars)
			case hugeEvery < 0:
				return fmt.Errorf("--huge-every %d: give 0 (never) or more", hugeEvery)
			}
			f, err := formats.ParseFormat(format, false)
			if err != nil {
				return err
			}
			cfg := synthetic.Default(messages)
			cfg.Seed, cfg.ResultChars, cfg.HugeEvery = seed, resultChars, hugeEvery
			return formats.Export(a.stdout, []string{"You are a careful coding agent working in a Go repository."},
				synthetic.Generate(cfg), f, false)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&messages, "messages", 2000, "approximate number of messages")
	fl.IntVar(&resultChars, "result-chars", 1200, "typical size of a tool result")
	fl.IntVar(&hugeEvery, "huge-every", 50, "one tool result in this many is 40 times larger (0: never)")
	fl.Uint64Var(&seed, "seed", 1, "random seed")
	fl.StringVar(&format, "format", "openai", "output format: openai or anthropic")
	return cmd
}
