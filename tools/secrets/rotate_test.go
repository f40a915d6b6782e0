package secrets

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSecretKeyRotation: with TOOLROUND_SECRET_KEY_PREVIOUS holding the old
// key, values the old key sealed (stored secrets, sealed arguments) open
// with the new key's Config, everything sealed from then on is the new
// key's alone, and a key loaded without the previous one opens no old
// value. A bad previous key is refused at load, naming its variable.
func TestSecretKeyRotation(t *testing.T) {
	oldKey, newKey, other := testKey(t), testKey(t), testKey(t)
	sealedOld, err := Seal(oldKey, "the old key's secret value")
	require.NoError(t, err)
	args, err := SealArguments(oldKey, `{"name":"token","value":"an argument sealed before"}`)
	require.NoError(t, err)

	_, err = Open(newKey, sealedOld)
	require.ErrorIs(t, err, ErrOpen, "before the rotation is configured, the new key opens nothing old")

	key, err := Config{Key: EncodeKey(newKey), Previous: EncodeKey(oldKey)}.LoadKey()
	require.NoError(t, err)
	require.Equal(t, newKey, key, "the key is the new one")
	plain, err := Open(key, sealedOld)
	require.NoError(t, err)
	require.Equal(t, "the old key's secret value", plain)
	require.Equal(t, "an argument sealed before", openedValue(t, key, args))

	store, err := NewStore(key, StoreOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, store.Put(ctx, "s", "old", sealedOld), "a value sealed with the old key is stored")
	got, err := store.Get(ctx, "s", "old")
	require.NoError(t, err)
	require.Equal(t, "the old key's secret value", got)

	sealedNew, err := Seal(key, "sealed during the window")
	require.NoError(t, err)
	_, err = Open(oldKey, sealedNew)
	require.ErrorIs(t, err, ErrOpen, "what is sealed during the window is the new key's")

	_, err = Open(other, sealedOld)
	require.ErrorIs(t, err, ErrOpen, "a key whose previous is not the old one opens nothing old")

	_, err = Config{Key: EncodeKey(newKey), Previous: "c2hvcnQ="}.LoadKey()
	require.ErrorContains(t, err, EnvKeyPrevious)
}
