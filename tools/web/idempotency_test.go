package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
)

// idempotentServer honours Idempotency-Key: a request whose key it has seen
// gets the stored answer and changes nothing. It counts the effects it
// applied, and the first time it applies one it drops the connection before
// answering: the request is lost mid-flight after it took effect.
type idempotentServer struct {
	*httptest.Server
	mu      sync.Mutex
	effects int
	seen    map[string]string
	keys    []string
	dropped bool
}

func newIdempotentServer(t *testing.T) *idempotentServer {
	s := &idempotentServer{seen: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		key := r.Header.Get(round.IdempotencyHeader)
		s.keys = append(s.keys, key)
		if answer, ok := s.seen[key]; ok && key != "" {
			s.mu.Unlock()
			_, _ = w.Write([]byte(answer))
			return
		}
		s.effects++
		answer := "created order " + key
		if key != "" {
			s.seen[key] = answer
		}
		drop := !s.dropped
		s.dropped = true
		s.mu.Unlock()
		if drop {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *idempotentServer) state() (effects int, keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.effects, append([]string(nil), s.keys...)
}

// A POST lost after the server applied it, sent again under the same
// operation id, takes effect once and gets the first answer.
func TestHTTPRequestPostRetriedUnderSameKeyTakesEffectOnce(t *testing.T) {
	srv := newIdempotentServer(t)
	def := toolSet(t, Config{})["http_request"]
	opID := round.OperationID("wf-1", "run-1", "c1")
	req := tools.Request{Tool: "http_request", CallID: "c1", OperationID: opID,
		Args: json.RawMessage(`{"url":"` + srv.URL + `/orders","method":"POST","body":"{\"item\":1}"}`)}

	_, err := def.Handler(context.Background(), req)
	require.Error(t, err, "the first attempt is lost mid-flight")
	res, err := def.Handler(context.Background(), req)
	require.NoError(t, err)
	require.Contains(t, res.Content, "created order "+opID)

	effects, keys := srv.state()
	require.Equal(t, 1, effects)
	require.Equal(t, []string{opID, opID}, keys)
}

// Safe methods carry no key; without an operation id nothing is sent, and
// a key the model set itself is kept.
func TestHTTPRequestIdempotencyKeyOnlyOnUnsafeMethods(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.Header.Get(round.IdempotencyHeader))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	def := toolSet(t, Config{})["http_request"]
	for _, c := range []struct {
		args string
		op   string
	}{
		{`{"url":"` + srv.URL + `"}`, "op-get"},
		{`{"url":"` + srv.URL + `","method":"DELETE"}`, "op-delete"},
		{`{"url":"` + srv.URL + `","method":"POST"}`, ""},
		{`{"url":"` + srv.URL + `","method":"PATCH","headers":{"Idempotency-Key":"mine"}}`, "op-patch"},
	} {
		_, err := def.Handler(context.Background(), tools.Request{OperationID: c.op, Args: json.RawMessage(c.args)})
		require.NoError(t, err)
	}
	require.Equal(t, []string{"GET ", "DELETE op-delete", "POST ", "PATCH mine"}, got)
}

// Only hosts the operator lists as honouring Idempotency-Key make a POST
// or PATCH retryable; the method's own class holds everywhere else.
func TestHTTPRequestEffectOfIdempotentHosts(t *testing.T) {
	def := toolSet(t, Config{IdempotentHosts: []string{"API.example.com", "127.0.0.1:8080"}})["http_request"]
	for args, want := range map[string]tools.SideEffect{
		`{"url":"https://api.example.com/orders","method":"POST"}`:       tools.Idempotent,
		`{"url":"https://api.example.com:8443/orders","method":"patch"}`: tools.Idempotent,
		`{"url":"http://127.0.0.1:8080/orders","method":"POST"}`:         tools.Idempotent,
		`{"url":"http://127.0.0.1:9090/orders","method":"POST"}`:         tools.AtMostOnce,
		`{"url":"https://other.example.com/orders","method":"POST"}`:     tools.AtMostOnce,
		`{"url":"https://{{secret:HOST}}/orders","method":"POST"}`:       tools.AtMostOnce,
		`{"url":"https://api.example.com/orders"}`:                       tools.ReadOnly,
		`{"url":"https://api.example.com/orders","method":"DELETE"}`:     tools.Idempotent,
	} {
		require.Equal(t, want, def.Effect(json.RawMessage(args)), args)
	}
	plain := toolSet(t, Config{})["http_request"]
	require.Equal(t, tools.AtMostOnce, plain.Effect(json.RawMessage(`{"url":"https://api.example.com/orders","method":"POST"}`)))
}
