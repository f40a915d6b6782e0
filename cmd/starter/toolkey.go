package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolround/toolround/internal/keyfile"
	"github.com/toolround/toolround/tools/secrets"
	"github.com/toolround/toolround/toolworker"
)

// tool-key: the key a tool worker of one queue is given.

var toolKeyCommand = &command{name: "tool-key", args: "QUEUE", npos: 1,
	summary: "Print the key (base64) that a tool worker of QUEUE is given as " + toolworker.EnvToolKey + ":\n" +
		"with it, it opens the secrets a call of its tools sends and seals its answers to them (Y3).\n" +
		"It is derived from TOOLROUND_SECRET_KEY[_FILE] and opens nothing of another queue.",
	run: func(ctx context.Context, x *call) error {
		if strings.TrimSpace(x.pos[0]) == "" {
			return usageError{errors.New("tool-key needs the tool worker's task queue"), x.usage}
		}
		key, err := secrets.ConfigFromEnv().LoadKey()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(x.stdout, keyfile.Encode(secrets.QueueKey(key, x.pos[0])))
		return err
	}}
