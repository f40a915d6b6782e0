package check

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// chart is the chart's folder, relative to this package.
const chart = "../helm/toolround"

// helmBinary is $HELM, else the helm that scripts/test.sh builds into
// .tools/bin. Without one the tests skip, and fail under CI=true.
func helmBinary(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	h, _ := filepath.Abs("../../.tools/bin/helm")
	if _, err := os.Stat(h); err == nil {
		return h
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no helm: scripts/test.sh builds it into .tools/bin (or set HELM)")
	}
	t.Skip("no helm in .tools/bin (scripts/test.sh builds it) and HELM unset")
	return ""
}

func key(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}

// keys are the --set flags of a Secret made by the chart.
func keys(t *testing.T) []string {
	return []string{
		"secrets.ruleKey=" + key(t), "secrets.secretKey=" + key(t),
		"secrets.linkKey=" + key(t), "secrets.sessionKey=" + key(t),
		"secrets.consoleTokens=tok-abc ops approver",
	}
}

// render runs helm template with these --set flags.
func render(t *testing.T, set ...string) ([]byte, error) {
	t.Helper()
	args := []string{"template", "tr", chart, "--namespace", "toolround"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helmBinary(t), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stderr.Bytes(), err
	}
	return stdout.Bytes(), nil
}

func mustRender(t *testing.T, set ...string) []Object {
	t.Helper()
	out, err := render(t, set...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", set, err, out)
	}
	objs, err := Decode(out)
	if err != nil {
		t.Fatalf("strict decoding of helm template %v: %v", set, err)
	}
	return objs
}

func find[T any](objs []Object, name string) (T, bool) {
	for _, o := range objs {
		if v, ok := o.Obj.(T); ok {
			if m, ok := any(v).(interface{ GetName() string }); ok && m.GetName() == name {
				return v, true
			}
		}
	}
	var zero T
	return zero, false
}

func env(c corev1.Container, name string) (corev1.EnvVar, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return corev1.EnvVar{}, false
}

// Every values file a release may use renders, and every document decodes
// strictly into a registered k8s.io/api type; none is a CRD.
func TestChartRendersStrictlyIntoKubernetesTypesO4(t *testing.T) {
	base := slices.Clip(append(keys(t), "redis.url=redis://redis:6379/0"))
	cases := map[string][]string{
		"keys in values":  base,
		"existing Secret": {"secrets.existingSecret=toolround-keys", "redis.urlSecret.name=redis-url"},
		"TLS and API key": append(base, "temporal.tls.secretName=temporal-client", "temporal.tls.ca=true",
			"temporal.tls.serverName=temporal.example", "temporal.apiKeySecret.name=temporal-cloud"),
		"ramp with the previous build": append(base, "image.tag=v1.3.0", "versioning.ramp=25", "versioning.previousTag=v1.2.0"),
		"unversioned, no console":      append(base, "versioning.enabled=false", "console.enabled=false"),
		"rotation window": append(base, "secrets.ruleKeyPrevious="+key(t), "secrets.secretKeyPrevious="+key(t),
			"secrets.linkKeyPrevious="+key(t), "secrets.sessionKeyPrevious="+key(t)),
	}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, set...)
			if len(objs) < 3 {
				t.Fatalf("%d documents, want the workers, their budget and more", len(objs))
			}
			for _, o := range objs {
				if strings.Contains(o.Kind.Kind, "CustomResourceDefinition") {
					t.Errorf("%s: the chart installs no CRDs", o.Source)
				}
			}
		})
	}
}

// The workers' Deployment: probes on O2's endpoints, a grace period longer
// than WORKER_STOP_TIMEOUT, the build id from the image tag, the keys from
// the Secret; a PodDisruptionBudget; the post-upgrade hook of V1.
func TestWorkersFollowO2AndV1(t *testing.T) {
	objs := mustRender(t, append(keys(t), "redis.url=redis://redis:6379/0", "image.tag=v1.3.0_rc.1",
		"worker.stopTimeoutSeconds=90")...)
	w, ok := find[*appsv1.Deployment](objs, "tr-toolround-worker")
	if !ok {
		t.Fatal("no worker Deployment")
	}
	pod := w.Spec.Template.Spec
	c := pod.Containers[0]
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("worker probes: liveness %+v readiness %+v, want /healthz and /readyz", c.LivenessProbe, c.ReadinessProbe)
	}
	if e, _ := env(c, "HEALTH_ADDR"); !strings.HasSuffix(e.Value, ":"+strconv.Itoa(int(c.Ports[0].ContainerPort))) || c.LivenessProbe.HTTPGet.Port.String() != c.Ports[0].Name {
		t.Errorf("HEALTH_ADDR %q, probe port %s, container port %+v: the probes must reach HEALTH_ADDR", e.Value, c.LivenessProbe.HTTPGet.Port.String(), c.Ports[0])
	}
	stop, _ := env(c, "WORKER_STOP_TIMEOUT")
	d, err := time.ParseDuration(stop.Value)
	if err != nil || d != 90*time.Second {
		t.Fatalf("WORKER_STOP_TIMEOUT %q (%v), want 90s", stop.Value, err)
	}
	if pod.TerminationGracePeriodSeconds == nil || time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second <= d {
		t.Errorf("terminationGracePeriodSeconds %v, want above WORKER_STOP_TIMEOUT %v", pod.TerminationGracePeriodSeconds, d)
	}
	if e, _ := env(c, "WORKER_BUILD_ID"); e.Value != "v1-3-0_rc-1" {
		t.Errorf("WORKER_BUILD_ID %q, want the image tag v1.3.0_rc.1 as a build id, v1-3-0_rc-1", e.Value)
	}
	if e, _ := env(c, "WORKER_DEPLOYMENT"); e.Value != "tr-toolround" {
		t.Errorf("WORKER_DEPLOYMENT %q, want the release's name", e.Value)
	}
	for _, name := range []string{"TOOLROUND_RULE_KEY", "TOOLROUND_SECRET_KEY", "NOTIFY_LINK_KEY"} {
		e, _ := env(c, name)
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "tr-toolround-keys" {
			t.Errorf("worker %s: %+v, want it from the Secret", name, e)
		}
	}
	if _, ok := find[*policyv1.PodDisruptionBudget](objs, "tr-toolround-worker"); !ok {
		t.Error("no PodDisruptionBudget for the workers")
	}
	if _, ok := find[*policyv1.PodDisruptionBudget](objs, "tr-toolround-console"); !ok {
		t.Error("no PodDisruptionBudget for the consoles")
	}
	job, ok := find[*batchv1.Job](objs, "tr-toolround-versioning")
	if !ok {
		t.Fatal("no versioning hook Job")
	}
	if job.Annotations["helm.sh/hook"] != "post-upgrade" {
		t.Errorf("hook annotations %v, want post-upgrade", job.Annotations)
	}
	hook := job.Spec.Template.Spec.Containers[0]
	script := strings.Join(hook.Args, "\n")
	if !strings.Contains(script, "temporal worker deployment set-current-version") {
		t.Errorf("hook script does not make the build current:\n%s", script)
	}
	if e, _ := env(hook, "BUILD_ID"); e.Value != "v1-3-0_rc-1" {
		t.Errorf("hook BUILD_ID %q, want the workers' build id", e.Value)
	}

	ramped := mustRender(t, append(keys(t), "redis.url=redis://redis:6379/0", "image.tag=v2",
		"versioning.ramp=10", "versioning.previousTag=v1")...)
	job, _ = find[*batchv1.Job](ramped, "tr-toolround-versioning")
	if s := strings.Join(job.Spec.Template.Spec.Containers[0].Args, "\n"); !strings.Contains(s, "set-ramping-version --percentage 10") {
		t.Errorf("with versioning.ramp=10 the hook does not ramp:\n%s", s)
	}
	prev, ok := find[*appsv1.Deployment](ramped, "tr-toolround-worker-previous")
	if !ok {
		t.Fatal("versioning.previousTag: no Deployment of the previous build")
	}
	if e, _ := env(prev.Spec.Template.Spec.Containers[0], "WORKER_BUILD_ID"); e.Value != "v1" {
		t.Errorf("previous build's WORKER_BUILD_ID %q, want v1", e.Value)
	}
	cur, _ := find[*appsv1.Deployment](ramped, "tr-toolround-worker")
	if cur.Spec.Selector.String() == prev.Spec.Selector.String() {
		t.Error("the two builds' Deployments share a selector")
	}

	unversioned := mustRender(t, append(keys(t), "redis.url=redis://redis:6379/0", "versioning.enabled=false")...)
	if _, ok := find[*batchv1.Job](unversioned, "tr-toolround-versioning"); ok {
		t.Error("unversioned workers get a versioning hook")
	}
}

// The consoles: probes, every shared key from the Secret, CONSOLE_REPLICAS
// as many as run, the tokens file mounted from the Secret (O3).
func TestConsolesShareKeysFromTheSecretO3(t *testing.T) {
	objs := mustRender(t, "secrets.existingSecret=mine", "redis.url=redis://redis:6379/0", "console.replicas=3")
	d, ok := find[*appsv1.Deployment](objs, "tr-toolround-console")
	if !ok {
		t.Fatal("no console Deployment")
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Error("console probes are not /healthz and /readyz")
	}
	for _, name := range []string{"CONSOLE_SESSION_KEY", "NOTIFY_LINK_KEY", "TOOLROUND_SECRET_KEY"} {
		e, _ := env(c, name)
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "mine" || e.ValueFrom.SecretKeyRef.Optional != nil {
			t.Errorf("console %s: %+v, want it from the Secret mine, not optional", name, e)
		}
	}
	if e, _ := env(c, "CONSOLE_SESSION_KEY_PREVIOUS"); e.ValueFrom == nil || e.ValueFrom.SecretKeyRef.Optional == nil || !*e.ValueFrom.SecretKeyRef.Optional {
		t.Errorf("CONSOLE_SESSION_KEY_PREVIOUS %+v, want an optional Secret key", e)
	}
	if e, _ := env(c, "CONSOLE_REPLICAS"); e.Value != "3" {
		t.Errorf("CONSOLE_REPLICAS %q, want 3", e.Value)
	}
	if _, ok := find[*corev1.Secret](objs, "tr-toolround-keys"); ok {
		t.Error("with secrets.existingSecret the chart still makes a Secret")
	}
	if _, ok := find[*corev1.Service](objs, "tr-toolround-console"); !ok {
		t.Error("no console Service")
	}
	// Workers read NOTIFY_APPROVER's scope in the same tokens file, and
	// send the consoles' address in links (N2).
	w, _ := find[*appsv1.Deployment](mustRender(t, "secrets.existingSecret=mine", "redis.url=redis://redis:6379/0",
		"console.url=https://toolround.example"), "tr-toolround-worker")
	wc := w.Spec.Template.Spec.Containers[0]
	ct, _ := env(c, "CONSOLE_TOKENS")
	if e, _ := env(wc, "CONSOLE_TOKENS"); e.Value != ct.Value || e.Value == "" {
		t.Errorf("worker CONSOLE_TOKENS %q, console's %q: want the same file", e.Value, ct.Value)
	}
	if e, _ := env(wc, "CONSOLE_URL"); e.Value != "https://toolround.example" {
		t.Errorf("worker CONSOLE_URL %q, want console.url", e.Value)
	}
}

// Rendering fails, naming what is missing, without each key and token and
// without Redis; a bad ramp or grace period fails too.
func TestChartRefusesToRenderWithoutSecrets(t *testing.T) {
	all := append(keys(t), "redis.url=redis://redis:6379/0")
	with := func(set string) []string { return append(slices.Clip(all), set) }
	without := func(prefix string) []string {
		var out []string
		for _, s := range all {
			if !strings.HasPrefix(s, prefix) {
				out = append(out, s)
			}
		}
		return out
	}
	cases := map[string]struct {
		set  []string
		want string
	}{
		"no rule key":       {without("secrets.ruleKey="), "TOOLROUND_RULE_KEY"},
		"no secret key":     {without("secrets.secretKey="), "TOOLROUND_SECRET_KEY"},
		"no link key":       {without("secrets.linkKey="), "NOTIFY_LINK_KEY"},
		"no session key":    {without("secrets.sessionKey="), "CONSOLE_SESSION_KEY"},
		"no console tokens": {without("secrets.consoleTokens="), "CONSOLE_TOKENS"},
		"nothing":           {[]string{"redis.url=redis://redis:6379/0"}, "is required"},
		"no Redis":          {without("redis.url="), "redis.url"},
		"ramp of 100":       {with("versioning.ramp=100"), "versioning.ramp"},
		"no grace":          {with("worker.terminationGraceExtraSeconds=0"), "terminationGraceExtraSeconds"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := render(t, c.set...)
			if err == nil {
				t.Fatalf("rendered without failing:\n%s", out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Errorf("helm's error does not name %s:\n%s", c.want, out)
			}
		})
	}
}

// helm lint --strict passes on the chart with its keys.
func TestChartLints(t *testing.T) {
	args := []string{"lint", "--strict", chart}
	for _, s := range append(keys(t), "redis.url=redis://redis:6379/0") {
		args = append(args, "--set", s)
	}
	out, err := exec.Command(helmBinary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
}

// The decoder itself: a kind no registered group has, a field Kubernetes
// does not know and a field given twice each fail.
func TestStrictDecoderRefusesUnknownKindsAndFields(t *testing.T) {
	cases := map[string]string{
		"unknown kind":    "apiVersion: apps/v1\nkind: Deploymnet\nmetadata:\n  name: x\n",
		"a CRD":           "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x\n",
		"unknown field":   "apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  prots: []\n",
		"duplicate field": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\ndata:\n  c: d\n",
		"wrong type":      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  replicas: two\n",
	}
	for name, doc := range cases {
		if _, err := Decode([]byte("---\n# Source: test\n" + doc)); err == nil {
			t.Errorf("%s: decoded without an error", name)
		}
	}
	objs, err := Decode([]byte("---\n# Source: empty.yaml\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
	if err != nil || len(objs) != 1 {
		t.Fatalf("a ConfigMap after an empty document: %v, %d objects", err, len(objs))
	}
}

// A change of the keys the chart keeps restarts workers and consoles (their
// pods carry the Secret's checksum), so a rotation reaches every process.
func TestChangedKeysRestartThePods(t *testing.T) {
	set := append(keys(t), "redis.url=redis://redis:6379/0")
	checksums := func(set []string) []string {
		objs := mustRender(t, set...)
		var out []string
		for _, name := range []string{"tr-toolround-worker", "tr-toolround-console"} {
			d, ok := find[*appsv1.Deployment](objs, name)
			if !ok {
				t.Fatalf("no Deployment %s", name)
			}
			out = append(out, d.Spec.Template.Annotations["checksum/keys"])
		}
		return out
	}
	before := checksums(set)
	again := checksums(set)
	rotated := checksums(append(slices.Clip(set), "secrets.ruleKeyPrevious="+key(t)))
	for i := range before {
		if before[i] == "" || before[i] != again[i] {
			t.Errorf("checksum %q then %q: want one that the same keys keep", before[i], again[i])
		}
		if rotated[i] == before[i] {
			t.Errorf("a new previous key leaves the checksum %q: the pods would keep the old keys", before[i])
		}
	}
}
