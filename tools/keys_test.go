package tools

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConcurrencyKeys(t *testing.T) {
	host, path := HostKey("url"), PathKey("path")
	for args, want := range map[string]string{
		`{"url":"https://Example.COM/a?b=1"}`: "host:example.com",
		`{"url":" http://h:8080/x "}`:         "host:h:8080",
		`{"url":"not a url"}`:                 "",
		`{"url":7}`:                           "",
		`not json`:                            "",
	} {
		require.Equal(t, want, host(json.RawMessage(args)), args)
	}
	for args, want := range map[string]string{
		`{"path":"./a/b.txt"}`: "path:a/b.txt",
		`{"path":"a//b.txt"}`:  "path:a/b.txt",
		`{"path":"a/../c"}`:    "path:c",
		`{"path":""}`:          "",
		`{"other":"a"}`:        "",
	} {
		require.Equal(t, want, path(json.RawMessage(args)), args)
	}
	d := &Definition{ConcurrencyKey: path}
	key, limit := KeyOf(d, json.RawMessage(`{"path":"x"}`))
	require.Equal(t, "path:x", key)
	require.Equal(t, DefaultKeyLimit, limit)
	key, limit = KeyOf(&Definition{}, json.RawMessage(`{"path":"x"}`))
	require.Empty(t, key)
	require.Zero(t, limit)
}
