package server

import (
	"fmt"
	"os"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/storage"
)

// openStore opens the session store; a store locked by another daemon is remembered and reported by every
// session method, never a hang.
func (s *Server) openStore() {
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	if s.opts.Store != nil {
		s.store = s.opts.Store
		return
	}
	override := s.opts.DataDir
	if override == "" {
		override = s.settings().DataDir
	}
	dir, err := storage.DataDir(override)
	if err == nil {
		s.store, err = storage.OpenDataDir(dir, storage.DefaultOptions("").WithLogger(s.log))
	}
	if err != nil {
		s.storeErr = err
		s.log.Warn("the session store is unavailable", zap.Error(err))
		go s.showMessage(protocol.MessageTypeWarning, "Alisio: "+err.Error())
		return
	}
	if s.dataDirInfo, err = os.Stat(dir); err == nil {
		s.dataDir = dir
		s.goBackground(s.watchDataDir)
	}
}

// dataDirCheck is how often a private daemon checks that its data directory is still there.
const dataDirCheck = time.Second

// watchDataDir checks the private store's data directory until the connection ends.
func (s *Server) watchDataDir() {
	tick := time.NewTicker(dataDirCheck)
	defer tick.Stop()
	for {
		select {
		case <-s.connCtx.Done():
			return
		case <-tick.C:
			err := s.checkDataDir()
			if err != nil {
				return
			}
		}
	}
}

// checkDataDirLocked fails once the private store's data directory was removed (or replaced): the store's
// files are gone with it, so every later request is refused, the editor is told, and the daemon leaves
// without closing the store (Badger would retry its flush into the removed directory forever).
func (s *Server) checkDataDirLocked() error {
	if s.dataDirInfo == nil || s.storeErr != nil {
		return s.storeErr
	}
	if now, err := os.Stat(s.dataDir); err == nil && os.SameFile(now, s.dataDirInfo) {
		return nil
	}
	s.storeErr = fmt.Errorf("the data directory %s was removed while Alisio ran, so nothing more can be saved there: "+
		"restart Alisio (Alisio: Restart Server in VS Code, :AlisioRestart in Neovim) to start with a new one", s.dataDir)
	s.log.Error("the data directory was removed; leaving without closing the store", zap.String("dataDir", s.dataDir))
	s.store = nil // its files are gone: never closed, never written again
	msg := "Alisio: " + s.storeErr.Error()
	s.goBackground(func() { s.showMessage(protocol.MessageTypeError, msg) })
	select {
	case s.exit <- 1:
	default:
	}
	return s.storeErr
}

// checkDataDir is checkDataDirLocked under the store's lock.
func (s *Server) checkDataDir() error {
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	return s.checkDataDirLocked()
}

// currentStore is the session store (nil when it is unavailable).
func (s *Server) currentStore() *storage.Store {
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	return s.store
}
