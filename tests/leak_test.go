package tests

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/toolround/toolround/internal/testenv"
	"github.com/toolround/toolround/round"
	"github.com/toolround/toolround/tools"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/tools/secrets/secretstest"
)

// leakRedisDB is the Redis database the leak hunt's worker uses alone, so
// that every key in it can be read.
const leakRedisDB = 12

// TestSecretsNeverLeave is the leak hunt of T9: secrets that break naive
// redaction are stored through every spelling of store_secret, used in
// headers, URLs, user info and bodies against a server that gives them back
// in every encoding, in redirects, errors and binary bodies, across a cut,
// by a command, and across a crash of the worker mid-call. Then every sink
// is read: the starter's output, each round's workflow history, memo and
// search attributes, every key and value of the worker's Redis database and
// the worker's log. No encoding of any value may appear in any of them.
func TestSecretsNeverLeave(t *testing.T) {
	values := hardSecrets("LONG", longSecret(t, 4096))
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)

	redisURL := leakRedisURL(t, leakRedisDB)
	rdb := leakRedis(t, redisURL)
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	e := newEnv(t, "TOOLROUND_SECRET_KEY="+secrets.EncodeKey(key), "REDIS_URL="+redisURL)

	echo := newEchoServerAndOther(t)

	var logs []*syncBuffer
	w := e.startWorker()
	logs = append(logs, w.logs)
	var outputs []string
	var ids []string
	state := &round.RunState{Fetched: []string{"http_request", "store_secret", "run_command"}}
	runRound := func(n int, calls ...round.ToolCall) round.Result {
		t.Helper()
		in := e.input(n, "claude-code", state, calls...)
		in.AutoApprove = true
		// Calls that send a secret ask whatever auto_approve says (T5):
		// a person approves each, through the starter.
		r := e.approveAll(in.WorkflowID(), e.startRound(in), &outputs)
		outputs = append(outputs, r.stdout, r.stderr)
		ids = append(ids, in.WorkflowID())
		res := decodeResult(t, r)
		requireEveryCallOnce(t, in, res)
		state = res.State
		return res
	}

	// Round 1: store them, through every spelling a client must seal. This
	// provider has no run_tool, and the schema wants "value" in lower case:
	// such calls are refused, but their arguments are in history all the
	// same. A one-character secret is refused:
	// redacting it would erase it everywhere.
	res := runRound(1,
		call("s-quote", "store_secret", map[string]any{"name": "QUOTE", "value": values["QUOTE"]}),
		call("s-markup", "store_secret", map[string]any{"name": "MARKUP", "value": values["MARKUP"]}),
		call("s-unicode", "store_secret", map[string]any{"name": "UNICODE", "value": values["UNICODE"]}),
		call("case-markup", "store_secret", `{"name":"MARKUP","VALUE":`+jsonString(t, values["MARKUP"])+`}`),
		call("case-unicode", "store_secret", `{"name":"UNICODE","Value":`+jsonString(t, values["UNICODE"])+`}`),
		call("s-long", "store_secret", `{"name":"LONG","value":"x","value":`+jsonString(t, values["LONG"])+`}`),
		call("rt-markup", "run_tool", `{"name":"store\u005fsecret","args":{"name":"MARKUP","value":`+jsonString(t, values["MARKUP"])+`}}`),
		runTool("rt-long", "store_secret", `{"name":"LONG","VALUE":`+jsonString(t, values["LONG"])+`}`),
		call("s-one", "store_secret", map[string]any{"name": "ONE", "value": "x"}),
	)
	r := byID(res)
	for _, id := range []string{"s-quote", "s-markup", "s-unicode", "s-long"} {
		require.Equal(t, round.StatusOK, r[id].Status, "%s: %s", id, r[id].Content)
		require.NotContains(t, r[id].Content, "unsealed", "%s was sealed by the client", id)
	}
	require.Equal(t, round.StatusError, r["s-one"].Status)
	require.Contains(t, r["s-one"].Content, "shorter than 8 characters")

	// Round 2: every way to send each secret, given back in every encoding.
	host := strings.TrimPrefix(echo.srv.URL, "http://")
	var calls []round.ToolCall
	kind := map[string]string{} // call id -> what it checks
	add := func(k, id, name string, args map[string]any) {
		calls = append(calls, call(id, "http_request", args))
		kind[id] = k + " " + name
	}
	for _, n := range names {
		ph := "{{secret:" + n + "}}"
		sets := []string{"all"}
		if n == "LONG" {
			sets = []string{"half0", "half1"}
		}
		for _, set := range sets {
			id := n + "-" + set
			add("ok", "hdr-"+id, n, map[string]any{"url": echo.srv.URL + "/echo?forms=" + set, "headers": map[string]string{"X-Token": ph}})
			add("ok", "query-"+id, n, map[string]any{"url": echo.srv.URL + "/echo?forms=" + set + "&k=" + ph})
			add("ok", "path-"+id, n, map[string]any{"url": echo.srv.URL + "/p/" + ph + "?forms=" + set})
			add("ok", "user-"+id, n, map[string]any{"url": "http://user:" + ph + "@" + host + "/echo?forms=" + set})
			add("ok", "body-"+id, n, map[string]any{"url": echo.srv.URL + "/echo?forms=" + set, "method": "POST", "body": `{"password":"` + ph + `"}`})
		}
		add("error", "e500-"+n, n, map[string]any{"url": echo.srv.URL + "/echo?forms=all&status=500", "headers": map[string]string{"X-Token": ph}})
		add("error", "e404-"+n, n, map[string]any{"url": echo.srv.URL + "/echo?forms=all&status=404&k=" + ph})
		add("error", "e401-"+n, n, map[string]any{"url": echo.srv.URL + "/echo?forms=all&status=401", "method": "POST", "body": ph})
		add("stopped", "r307-"+n, n, map[string]any{"url": echo.srv.URL + "/away", "method": "POST", "body": `{"password":"` + ph + `"}`})
		add("ok", "r302-"+n, n, map[string]any{"url": echo.srv.URL + "/here?k=" + ph})
		add("binary", "bin-"+n, n, map[string]any{"url": echo.srv.URL + "/bin", "headers": map[string]string{"X-Token": ph}})
		add("ok", "cut-"+n, n, map[string]any{"url": echo.srv.URL + "/cut?k=" + ph})
	}
	calls = append(calls, call("cmd", "run_command", map[string]any{"command": `echo "arg {{secret:QUOTE}}"`}))
	res = runRound(2, calls...)
	r = byID(res)
	for id, what := range kind {
		k, n, _ := strings.Cut(what, " ")
		c := r[id]
		switch k {
		case "ok":
			require.Equal(t, round.StatusOK, c.Status, "%s: %s", id, c.Content)
			require.Contains(t, c.Content, "[secret:"+n+"]", id)
		case "error":
			require.Equal(t, round.StatusError, c.Status, "%s: %s", id, c.Content)
		case "stopped":
			require.Equal(t, round.StatusError, c.Status, "%s: %s", id, c.Content)
			require.Contains(t, c.Content, "the request body holds a secret", id)
		case "binary":
			require.Contains(t, c.Content, "digest not shown", id)
		}
	}
	require.Zero(t, echo.otherHits.Load(), "a body with a secret never reached the other host")
	// Commands do not expand placeholders: the command printed the text.
	require.Contains(t, r["cmd"].Content, "arg {{secret:QUOTE}}")

	// Round 3: the worker dies while a call that carries a secret waits for
	// the server; a new worker finishes the round.
	done := e.startRound(func() round.Input {
		in := e.input(3, "claude-code", state,
			call("held", "http_request", map[string]any{"url": echo.srv.URL + "/hold?forms=all", "headers": map[string]string{"X-Token": "{{secret:QUOTE}}"}}))
		in.AutoApprove = true
		ids = append(ids, in.WorkflowID())
		return in
	}())
	held := ids[len(ids)-1]
	e.waitPending(held, "held")
	outputs = append(outputs, e.mustStarter("approve", held, "held").stderr)
	require.Eventually(t, func() bool { return echo.holding.Load() > 0 }, time.Minute, 20*time.Millisecond, "the held call reached the server")
	w.kill(t)
	w2 := e.startWorker()
	logs = append(logs, w2.logs)
	echo.release()
	out := e.approveAll(ids[len(ids)-1], done, &outputs)
	outputs = append(outputs, out.stdout, out.stderr)
	res = decodeResult(t, out)
	require.Len(t, res.Results, 1)
	require.Equal(t, round.StatusOK, res.Results[0].Status, res.Results[0].Content)
	require.Contains(t, res.Results[0].Content, "[secret:QUOTE]")
	require.GreaterOrEqual(t, echo.holding.Load(), 2, "the new worker sent the request again")

	// Every sink.
	sinks := map[string]string{}
	for i, o := range outputs {
		sinks[fmt.Sprintf("starter output %d", i)] = o
	}
	dump := e.storedSinks(sinks, ids, rdb)
	for _, want := range []string{secrets.Key(e.session), tools.HistoryKey(e.session), "toolround:blob:"} {
		found := false
		for k := range dump {
			found = found || strings.HasPrefix(k, want)
		}
		require.True(t, found, "the Redis dump has %s*", want)
	}
	t.Logf("read %d sinks, %d of them Redis keys", len(sinks)+len(logs), len(dump))
	for i, l := range logs {
		sinks[fmt.Sprintf("worker log %d", i)] = l.String()
	}
	require.NotEmpty(t, sinks)
	red := secrets.NewRedactor(values)
	checks := 0
	for sink, text := range sinks {
		for _, n := range names {
			for form, enc := range secretstest.Encodings(values[n]) {
				require.NotContains(t, text, enc, "%s: the %s form of %s leaked", sink, form, n)
				checks++
			}
		}
		require.False(t, red.Contains(text), "%s holds a secret: %s", sink, clip(red.Redact(text), text))
	}
	t.Logf("leak cases held: %d (a sink, a secret, an encoding of it)", checks)
	require.Contains(t, sinks["description of "+ids[0]], "toolround_input_hmac")
	require.NotContains(t, sinks["description of "+ids[0]], "toolround_input_sha256")
}

// hardSecrets are secret values that break naive redaction (quotes and
// escapes, markup and entities, text beyond ASCII), named as store_secret
// stores them, with one more of the test's own.
func hardSecrets(name, value string) map[string]string {
	return map[string]string{
		"QUOTE":   `q"uo\te'd-s3cret`,
		"MARKUP":  `<tag a="1">&amp;'x'</tag>`,
		"UNICODE": "pässwörd-€-😀-秘密+/=",
		name:      value,
	}
}

// leakRedisURL is REDIS_URL with a leak hunt's own database, db.
func leakRedisURL(t *testing.T, db int) string {
	u, err := url.Parse(testenv.RedisURL())
	require.NoError(t, err)
	u.Path = "/" + strconv.Itoa(db)
	return u.String()
}

// leakRedis empties the leak hunt's database, so that each run reads only
// its own keys.
func leakRedis(t *testing.T, redisURL string) *redis.Client {
	opts, err := redis.ParseURL(redisURL)
	require.NoError(t, err)
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		testenv.Unavailable(t, "redis at %s: %v", redisURL, err)
	}
	require.NoError(t, rdb.FlushDB(ctx).Err())
	return rdb
}

// storedSinks adds to sinks the history and the description of each round
// of ids, their payloads decoded, and every key of the worker's Redis
// database rdb, which it returns.
func (e *env) storedSinks(sinks map[string]string, ids []string, rdb *redis.Client) map[string]string {
	e.t.Helper()
	for _, id := range ids {
		sinks["history of "+id] = withPayloads(e.t, e.history(id))
		sinks["description of "+id] = withPayloads(e.t, e.describe(id))
	}
	dump := redisDump(e.t, rdb)
	for k, v := range dump {
		sinks["redis "+k] = v
	}
	return dump
}

// redisDump reads every key of the database with its value, whatever its
// type, the key's name included.
func redisDump(t *testing.T, rdb *redis.Client) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := map[string]string{}
	iter := rdb.Scan(ctx, 0, "*", 500).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		typ, err := rdb.Type(ctx, k).Result()
		require.NoError(t, err)
		var v any
		switch typ {
		case "string":
			v, err = rdb.Get(ctx, k).Result()
		case "list":
			v, err = rdb.LRange(ctx, k, 0, -1).Result()
		case "hash":
			v, err = rdb.HGetAll(ctx, k).Result()
		case "set":
			v, err = rdb.SMembers(ctx, k).Result()
		case "zset":
			v, err = rdb.ZRangeWithScores(ctx, k, 0, -1).Result()
		case "stream":
			v, err = rdb.XRange(ctx, k, "-", "+").Result()
		case "none":
			continue // expired since the scan
		default:
			t.Fatalf("redis key %s has type %s, which the leak hunt does not read", k, typ)
		}
		require.NoError(t, err, k)
		out[k] = k + " " + fmt.Sprint(v)
	}
	require.NoError(t, iter.Err())
	require.NotEmpty(t, out, "the worker wrote to its Redis database")
	return out
}

// describe is a round's description as the Temporal CLI prints it: memo
// and search attributes included.
func (e *env) describe(workflowID string) string {
	e.t.Helper()
	return e.workflowCLI("describe", workflowID)
}

// clip shows where redaction changed text, for a failure message.
func clip(redacted, text string) string {
	i := 0
	for i < len(redacted) && i < len(text) && redacted[i] == text[i] {
		i++
	}
	return redacted[max(0, i-200):min(len(redacted), i+200)]
}

func jsonString(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b)
}

// longSecret is n random characters, quotes and backslashes among them.
func longSecret(t *testing.T, n int) string {
	const alphabet = `abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"\<>&+/=%`
	var b strings.Builder
	for b.Len() < n {
		i, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		require.NoError(t, err)
		b.WriteByte(alphabet[i.Int64()])
	}
	return b.String()
}

// echoServer gives back the secret a request carried, in the encodings
// ?forms= names (all, or one half of them), with the status ?status= asks
// for; /away answers 307 to another host, /here 302 to itself, /bin sends it
// in a binary body, /cut puts it across http_request's cut, and /hold waits
// for release first.
type echoServer struct {
	srv       *httptest.Server
	other     string
	otherHits atomicInt
	holding   atomicInt
	releaseCh chan struct{}
	once      sync.Once
}

type atomicInt struct {
	mu sync.Mutex
	n  int
}

func (a *atomicInt) Add(d int) {
	a.mu.Lock()
	a.n += d
	a.mu.Unlock()
}

func (a *atomicInt) Load() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

func (s *echoServer) release() { s.once.Do(func() { close(s.releaseCh) }) }

// newEchoServerAndOther is newEchoServer with the other host that /away
// redirects to, which counts what reaches it.
func newEchoServerAndOther(t *testing.T) *echoServer {
	echo := newEchoServer(t)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo.otherHits.Add(1)
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "other host got %q", b)
	}))
	t.Cleanup(other.Close)
	echo.other = other.URL
	return echo
}

func newEchoServer(t *testing.T) *echoServer {
	s := &echoServer{releaseCh: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := sentSecret(r)
		switch {
		case r.URL.Path == "/away":
			http.Redirect(w, r, s.other+"/in", http.StatusTemporaryRedirect)
			return
		case r.URL.Path == "/here":
			http.Redirect(w, r, "/echo?forms=all&k="+url.QueryEscape(v), http.StatusFound)
			return
		case r.URL.Path == "/bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = io.WriteString(w, "\x00\x01"+v+"\x00")
			return
		case r.URL.Path == "/cut":
			// http_request shows 256 KiB: the value's JSON form runs across.
			w.Header().Set("Content-Type", "text/plain")
			enc := secretstest.Encodings(v)["json"]
			_, _ = io.WriteString(w, strings.Repeat(".", 256<<10-len(enc)/2)+enc+strings.Repeat(".", 1000))
			return
		case r.URL.Path == "/hold":
			s.holding.Add(1)
			select {
			case <-s.releaseCh:
			case <-r.Context().Done():
				return
			}
		}
		forms := secretstest.Encodings(v)
		keys := make([]string, 0, len(forms))
		for k := range forms {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		switch r.URL.Query().Get("forms") {
		case "half0":
			keys = keys[:len(keys)/2]
		case "half1":
			keys = keys[len(keys)/2:]
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", base64.StdEncoding.EncodeToString([]byte("user:"+v)))
		if code, err := strconv.Atoi(r.URL.Query().Get("status")); err == nil {
			w.WriteHeader(code)
		}
		for _, k := range keys {
			fmt.Fprintf(w, "%q: %s\n", k, forms[k])
		}
	}))
	t.Cleanup(func() { s.release(); s.srv.Close() })
	return s
}

// sentSecret is the secret a request carried, wherever it was put.
func sentSecret(r *http.Request) string {
	if _, pass, ok := r.BasicAuth(); ok {
		return pass
	}
	if v := r.Header.Get("X-Token"); v != "" {
		return v
	}
	if v := r.URL.Query().Get("k"); v != "" {
		return v
	}
	if v, ok := strings.CutPrefix(r.URL.Path, "/p/"); ok {
		return v
	}
	b, _ := io.ReadAll(r.Body)
	var body struct {
		Password string `json:"password"`
	}
	if json.Unmarshal(b, &body) == nil && body.Password != "" {
		return body.Password
	}
	return string(b)
}

// approveAll approves, with `starter approve`, every call of the round that
// waits for a decision, until the round's `starter round` ends; the
// starters' output is kept for the leak checks.
func (e *env) approveAll(wfID string, done <-chan result, outputs *[]string) result {
	e.t.Helper()
	approved := map[string]bool{}
	for {
		select {
		case r := <-done:
			return r
		case <-time.After(100 * time.Millisecond):
		}
		r := e.starter(context.Background(), "", "pending", wfID)
		var pending []round.Pending
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &pending) != nil {
			continue
		}
		for _, p := range pending {
			if p.Kind != round.KindConfirm || approved[p.CallID] {
				continue
			}
			a := e.starter(context.Background(), "", "approve", wfID, p.CallID)
			require.Equal(e.t, 0, a.code, a.stderr)
			*outputs = append(*outputs, a.stdout, a.stderr)
			approved[p.CallID] = true
		}
	}
}
