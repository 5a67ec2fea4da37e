package main

import (
	"context"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/informer"
	"github.com/listwatch/informer/expectations"
)

// reconcileCached is the reconcile this library teaches: read everything
// from the informers' caches, and call the API only to change something.
// A Cluster already converged costs zero calls, however often it is
// reconciled — which is why a short sync period costs it nothing.
//
// Its first run for a new Cluster makes one create per component and one
// status update, one after the other: components+1 sequential calls.
// It returns whether the Cluster is converged as far as it can tell, and
// how long its creates may still be waited for (0: none in flight).
func (c *controller) reconcileCached(ctx context.Context, key informer.Key) (converged bool, wait time.Duration, err error) {
	cr, err := c.clusterInf.Lister().Namespace(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		c.exp.Forget(key) // deleted: its ConfigMaps go with it (owner references)
		c.statusFrom.Delete(key)
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	// Creates we made have not all come back through the watch yet: the
	// cache would show them missing and we would create them twice. Their
	// Add events will enqueue this key again, and reconcile requeues it
	// after wait in case one never comes. One call decides both: asking
	// Satisfied, then ExpiresIn, could hear "wait" and then "0" as the TTL
	// ran out between them, and requeue nothing.
	if wait := c.exp.ExpiresIn(key); wait > 0 {
		return false, wait, nil
	}

	var missing []*corev1.ConfigMap
	for _, comp := range c.components {
		want := desiredConfigMap(cr, c.runID, comp)
		have, err := c.cmInf.Lister().Namespace(key.Namespace).Get(want.Name)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, want)
		case err != nil:
			return false, 0, err
		case !maps.Equal(have.Data, want.Data):
			// Drift: someone changed it. Update a copy, never the cached
			// object itself (pitfall 2).
			fixed := have.DeepCopy()
			fixed.Data = want.Data
			if err := c.core.Put().Namespace(key.Namespace).Resource("configmaps").Name(fixed.Name).
				Body(fixed).Do(ctx).Error(); err != nil {
				return false, 0, err
			}
		}
	}
	if len(missing) > 0 {
		if err := c.exp.ExpectCreations(key, len(missing)); err != nil { // before the creates, never after
			return false, 0, err
		}
		for i, cm := range missing {
			// Sent once (MaxRetries(0)): a retry's refusal could follow a
			// first attempt that was stored, and Refused judges one answer.
			err := c.core.Post().Namespace(key.Namespace).Resource("configmaps").Body(cm).MaxRetries(0).Do(ctx).Error()
			if expectations.Refused(err) {
				c.exp.CreationObserved(key) // not stored: no Add event will come for this one
			}
			if err != nil && !apierrors.IsAlreadyExists(err) { // AlreadyExists: its Add event is on its way
				for range missing[i+1:] {
					c.exp.CreationObserved(key) // nor for those never sent
				}
				return false, 0, err
			}
		}
	}

	if isReady(cr, len(c.components)) {
		return true, 0, nil // nothing to write: the cheap, common case
	}
	if from, ok := c.statusFrom.Load(key); ok && from == cr.GetResourceVersion() {
		return false, 0, nil // our status write is on its way back through the watch
	}
	updated := cr.DeepCopy()
	setReady(updated, len(c.components))
	body, err := updated.MarshalJSON()
	if err != nil {
		return false, 0, err
	}
	err = c.clusters.Put().Namespace(key.Namespace).Resource(plural).Name(key.Name).SubResource("status").
		Body(body).Do(ctx).Error()
	if apierrors.IsConflict(err) {
		// Our cached copy is older than the server's: a newer version is
		// on its way through the watch, and its event enqueues this key
		// again. Nothing to retry now.
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	c.statusFrom.Store(key, cr.GetResourceVersion())
	return true, 0, nil
}

// reconcileNaive is the reconcile the StarRocks post measured: it reads
// the Cluster and each ConfigMap from the API server (one GET each), and
// writes every one of them back whether or not anything changed. The
// server finds most of those writes to be no-ops, but every one is still a
// request that waits for the rate limiter and pays a round trip — on each
// event and on each resync of each Cluster.
//
// Its calls per run: 1 + 2 × components + 1, all sequential.
func (c *controller) reconcileNaive(ctx context.Context, key informer.Key) (bool, error) {
	cr, err := decode(c.clusters.Get().Namespace(key.Namespace).Resource(plural).Name(key.Name).Do(ctx).Raw())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, comp := range c.components {
		want := desiredConfigMap(cr, c.runID, comp)
		have := &corev1.ConfigMap{}
		err := c.core.Get().Namespace(key.Namespace).Resource("configmaps").Name(want.Name).Do(ctx).Into(have)
		switch {
		case apierrors.IsNotFound(err):
			err = c.core.Post().Namespace(key.Namespace).Resource("configmaps").Body(want).Do(ctx).Error()
		case err == nil:
			have.Data = want.Data // ours: it came from the API, not the cache
			err = c.core.Put().Namespace(key.Namespace).Resource("configmaps").Name(want.Name).Body(have).Do(ctx).Error()
		}
		if err != nil {
			return false, err
		}
	}
	setReady(cr, len(c.components))
	body, err := cr.MarshalJSON()
	if err != nil {
		return false, err
	}
	if err := c.clusters.Put().Namespace(key.Namespace).Resource(plural).Name(key.Name).SubResource("status").
		Body(body).Do(ctx).Error(); err != nil {
		return false, err
	}
	return true, nil
}
