// Package openapitest checks HTTP exchanges with the console against its
// OpenAPI 3.1 document (X1) with libopenapi-validator, a validator of
// OpenAPI 3.1, so that the document cannot drift from what the console
// answers. The console's tests call it wherever they receive an API
// response.
package openapitest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/toolround/toolround/console/openapi"
)

// Checker validates responses against the document.
type Checker struct {
	mu     sync.Mutex
	v      validator.Validator
	model  *v3.Document
	events *base.Schema
	schema schema_validation.SchemaValidator
}

// New reads the document and checks it against the OpenAPI 3.1 schema.
func New() (*Checker, error) {
	doc, err := libopenapi.NewDocument(openapi.JSON)
	if err != nil {
		return nil, fmt.Errorf("openapi: read the document: %w", err)
	}
	if v := doc.GetVersion(); !strings.HasPrefix(v, "3.1") {
		return nil, fmt.Errorf("openapi: the document is OpenAPI %s, not 3.1", v)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		return nil, fmt.Errorf("openapi: build the model: %w", err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		return nil, fmt.Errorf("openapi: %w", errors.Join(errs...))
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		return nil, fmt.Errorf("openapi: the document is not valid OpenAPI: %s", describe(verrs))
	}
	ev, ok := m.Model.Components.Schemas.Get("Event")
	if !ok {
		return nil, errors.New("openapi: the document has no Event component")
	}
	return &Checker{v: v, model: &m.Model, events: ev.Schema(), schema: schema_validation.NewSchemaValidator()}, nil
}

var (
	once     sync.Once
	shared   *Checker
	sharedEr error
)

// Shared is one Checker for a test binary.
func Shared() (*Checker, error) {
	once.Do(func() { shared, sharedEr = New() })
	return shared, sharedEr
}

// Model is the document's model, for tests that compare it with the
// console's routes.
func (c *Checker) Model() *v3.Document { return c.model }

// Response checks one response (its status, content type and body, which
// the caller has read) to req. An event stream's body is not checked here:
// its events are, one by one, with Event.
func (c *Checker) Response(req *http.Request, status int, header http.Header, body []byte) error {
	resp := &http.Response{StatusCode: status, Header: header.Clone(), Request: req}
	if strings.HasPrefix(header.Get("Content-Type"), "text/event-stream") {
		body = nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r := req.Clone(req.Context())
	r.Body = http.NoBody
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok, errs := c.v.ValidateHttpResponse(r, resp); !ok {
		return fmt.Errorf("%s %s answered %d, which the OpenAPI document does not allow: %s\nbody: %.600s",
			req.Method, req.URL.Path, status, describe(errs), body)
	}
	return nil
}

// Event checks one event's JSON (an SSE data: line) against the Event
// component.
func (c *Checker) Event(data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok, errs := c.schema.ValidateSchemaBytes(c.events, data); !ok {
		return fmt.Errorf("an event does not match the document's Event: %s\nevent: %.600s", describe(errs), data)
	}
	return nil
}

// Check fails t when the response does not match the document.
func Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Response(req, status, header, body); err != nil {
		t.Error(err)
	}
}

// CheckEvent fails t when an event does not match the document.
func CheckEvent(t testing.TB, data []byte) {
	t.Helper()
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Event(data); err != nil {
		t.Error(err)
	}
}

func describe[E interface{ Error() string }](errs []E) string {
	var b strings.Builder
	for i, e := range errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	return b.String()
}
