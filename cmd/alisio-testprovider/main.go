// Command alisio-testprovider serves a scripted OpenAI-compatible model on localhost, so that alisio-lsp can
// be tried and tested without an API key: point provider.baseURL at the address it prints.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback only by default)")
	scriptFile := flag.String("script", "", "JSON file of scripted replies, as testdata/try/script.json (replies, models, loop, paceMs; README, 'The main job'); empty: answer every request with a short text")
	flag.Parse()
	var script providertest.Script
	if *scriptFile != "" {
		raw, err := os.ReadFile(*scriptFile)
		if err == nil {
			err = json.Unmarshal(raw, &script)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "alisio-testprovider: reading --script: %v\n", err)
			os.Exit(2)
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "alisio-testprovider: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/v1\n", ln.Addr())
	if err := http.Serve(ln, providertest.New(script)); err != nil {
		fmt.Fprintf(os.Stderr, "alisio-testprovider: %v\n", err)
		os.Exit(1)
	}
}
