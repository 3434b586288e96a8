package durable_test

import (
	"context"
	"testing"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStartRefusesAnUnsafeRunID(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	for _, id := range []string{"r\x1b]0;pwned\x07", "r\u202e1", "a/../b"} {
		_, err := durable.Start(context.Background(), s, durable.Spec{Plan: mustPlan(t, chain)}, durable.WithAgent("wc", w.agent()), durable.WithRunID(id))
		assert.ErrorIs(t, err, runner.ErrInvalidRunID, "%q", id)
	}
	assert.Zero(t, w.total(), "nothing ran")
	runs, err := s.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, runs, "nothing was journaled")
}

// digestCatalog resolves every name to reg with the digest *digest.
func digestCatalog(reg *registry.Registry, digest *string) durable.Option {
	return durable.WithCatalog(func(context.Context, string) (*registry.Registry, string, error) { return reg, *digest, nil })
}

// TestResumeChecksTheCatalogDigest: the digest the catalog had when the
// run started is recorded in its spec; a resume or a replay on a catalog of
// another digest is refused before anything runs, unless the host vouches
// for the catalog with an empty digest.
func TestResumeChecksTheCatalogDigest(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	w.fail["b"] = true
	reg := registry.New()
	require.NoError(t, reg.Register("wc", registry.Worker{Agent: w.agent(), Outputs: []string{"words", "task"}}))
	digest := "sha256:aaaa"
	out, err := durable.Start(context.Background(), s, durable.Spec{Plan: mustPlan(t, chain), Catalog: "words.yaml"}, digestCatalog(reg, &digest), durable.WithRunID("r"))
	require.NoError(t, err)
	require.Equal(t, durable.StatusFailed, out.Status)
	r, err := durable.Load(context.Background(), s, "r")
	require.NoError(t, err)
	assert.Equal(t, "sha256:aaaa", r.Spec.CatalogDigest, "Start records the digest")
	ran := w.total()

	digest = "sha256:bbbb"
	_, err = durable.Resume(context.Background(), s, "r", digestCatalog(reg, &digest))
	var changed *durable.CatalogChangedError
	require.ErrorAs(t, err, &changed)
	assert.ErrorIs(t, err, durable.ErrCatalogChanged)
	assert.Equal(t, durable.CatalogChangedError{Name: "words.yaml", RunID: "r", Recorded: "sha256:aaaa", Found: "sha256:bbbb"}, *changed)
	assert.EqualError(t, err, "catalog words.yaml changed since run r started: its digest is sha256:bbbb, it was sha256:aaaa")
	_, err = durable.Replay(context.Background(), s, "r", digestCatalog(reg, &digest))
	assert.ErrorIs(t, err, durable.ErrCatalogChanged)
	assert.Equal(t, ran, w.total(), "nothing ran")

	w.fail["b"] = false
	digest = ""
	out, err = durable.Resume(context.Background(), s, "r", digestCatalog(reg, &digest))
	require.NoError(t, err, "a catalog the host vouches for")
	assert.Equal(t, durable.StatusCompleted, out.Status)

	digest = "sha256:aaaa"
	rep, err := durable.Replay(context.Background(), s, "r", digestCatalog(reg, &digest))
	require.NoError(t, err, "the catalog the run started on")
	assert.Equal(t, "r", rep.RunID)
}

// A run journaled without a digest cannot be told to resume on its
// catalog; a host that fingerprints catalogs refuses it, one that vouches
// for the catalog resumes it.
func TestResumeWithoutARecordedDigest(t *testing.T) {
	s := openStore(t)
	w := newWorkers()
	w.fail["b"] = true
	reg := registry.New()
	require.NoError(t, reg.Register("wc", registry.Worker{Agent: w.agent(), Outputs: []string{"words", "task"}}))
	digest := ""
	_, err := durable.Start(context.Background(), s, durable.Spec{Plan: mustPlan(t, chain), Catalog: "words.yaml"}, digestCatalog(reg, &digest), durable.WithRunID("r"))
	require.NoError(t, err)

	digest = "sha256:aaaa"
	_, err = durable.Resume(context.Background(), s, "r", digestCatalog(reg, &digest))
	assert.ErrorIs(t, err, durable.ErrCatalogChanged)
	assert.ErrorContains(t, err, "run r recorded no digest of its catalog words.yaml")

	digest = ""
	w.fail["b"] = false
	out, err := durable.Resume(context.Background(), s, "r", digestCatalog(reg, &digest))
	require.NoError(t, err)
	assert.Equal(t, durable.StatusCompleted, out.Status)
}

// A spec that names the digest of its catalog starts only on that catalog.
func TestStartChecksTheSpecDigest(t *testing.T) {
	w := newWorkers()
	reg := registry.New()
	require.NoError(t, reg.Register("wc", registry.Worker{Agent: w.agent(), Outputs: []string{"words", "task"}}))
	digest := "sha256:bbbb"
	spec := durable.Spec{Plan: mustPlan(t, chain), Catalog: "words.yaml", CatalogDigest: "sha256:aaaa"}
	_, err := durable.Start(context.Background(), nil, spec, digestCatalog(reg, &digest))
	assert.ErrorIs(t, err, durable.ErrCatalogChanged)
	assert.ErrorContains(t, err, "catalog words.yaml changed since the run started")
	assert.Zero(t, w.total())
}
