// Package check decodes the manifests that the Helm chart
// deploy/helm/toolround renders into the registered k8s.io/api types with
// apimachinery's strict deserializer (O4): a field Kubernetes does not know,
// a field given twice, a value of the wrong type or a kind that no
// registered group has fails. It is a module of its own so that the
// project's module does not depend on Kubernetes.
package check

import (
	"bytes"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// Scheme holds the groups a chart of workers and consoles may use. A
// CustomResourceDefinition is not among them: the chart installs no CRDs.
var Scheme = runtime.NewScheme()

func init() {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, batchv1.AddToScheme,
		policyv1.AddToScheme, networkingv1.AddToScheme, rbacv1.AddToScheme,
		autoscalingv2.AddToScheme,
	} {
		if err := add(Scheme); err != nil {
			panic(err)
		}
	}
}

// strict reads YAML or JSON into the scheme's types and refuses unknown
// and duplicate fields.
var strict = json.NewSerializerWithOptions(json.DefaultMetaFactory, Scheme, Scheme,
	json.SerializerOptions{Yaml: true, Strict: true})

// Object is one decoded document with where it came from.
type Object struct {
	Source string // the "# Source: ..." line helm writes above it
	Kind   schema.GroupVersionKind
	Obj    runtime.Object
}

// Decode splits helm's output into documents and decodes each strictly.
// Empty documents (a template that rendered nothing) are skipped.
func Decode(manifests []byte) ([]Object, error) {
	var out []Object
	for i, doc := range split(manifests) {
		source := ""
		body := false
		for _, line := range strings.Split(string(doc), "\n") {
			if s, ok := strings.CutPrefix(line, "# Source: "); ok && source == "" {
				source = s
			}
			if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
				body = true
			}
		}
		if !body {
			continue
		}
		obj, gvk, err := strict.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, source, err)
		}
		out = append(out, Object{Source: source, Kind: *gvk, Obj: obj})
	}
	return out, nil
}

// split cuts a YAML stream at its "---" lines.
func split(b []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if t := bytes.TrimRight(line, " \r\n"); bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			docs = append(docs, bytes.Clone(cur.Bytes()))
			cur.Reset()
			continue
		}
		cur.Write(line)
	}
	return append(docs, bytes.Clone(cur.Bytes()))
}
