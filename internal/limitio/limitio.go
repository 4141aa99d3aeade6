// Package limitio bounds what is read from a peer that may send without end (a provider, an MCP server).
package limitio

import "io"

// ReadCloser reads rc until limit bytes were read; every read after that fails with the error exceeded
// returns (called once).
func ReadCloser(rc io.ReadCloser, limit int64, exceeded func() error) io.ReadCloser {
	return &capped{rc: rc, left: limit, exceeded: exceeded}
}

type capped struct {
	rc       io.ReadCloser
	left     int64
	exceeded func() error
	err      error
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		if c.err == nil {
			c.err = c.exceeded()
		}
		return 0, c.err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.rc.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capped) Close() error { return c.rc.Close() }
