package text

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRootMessage(t *testing.T) {
	root := errors.New("connection refused")
	require.Equal(t, "connection refused", RootMessage(fmt.Errorf("bind: %w", fmt.Errorf("describe: %w", root))))
	require.Equal(t, "plain", RootMessage(errors.New("plain")))
}
