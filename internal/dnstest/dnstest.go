// Package dnstest gives tests the in-process DNS server of internal/localdns
// under its test name.
package dnstest

import "github.com/lohisoft/lohibot/internal/localdns"

// Server is a running DNS server (see localdns.Server).
type Server = localdns.Server

// NewServer starts a DNS server on 127.0.0.1 with no records (see
// localdns.NewServer).
func NewServer() (*Server, error) { return localdns.NewServer() }
