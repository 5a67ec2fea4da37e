package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// demo plays the part of a user: it creates parents, changes them and
// breaks a child, and after each step waits until the controller has
// brought the cache (and so the server) back in line.
func (c *controller) demo(ctx context.Context, parents, replicas int) error {
	step := func(format string, args ...any) { c.log.say("\n== "+format, args...) }

	step("You create %d parents asking for %d children each. The controller creates them.", parents, replicas)
	for i := range parents {
		name := fmt.Sprintf("parent-%d", i)
		_ = c.client.Delete().Namespace(c.ns).Resource("configmaps").Name(name).Do(ctx).Error() // an earlier run's
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{roleLabel: "parent"}},
			Data:       map[string]string{"replicas": strconv.Itoa(replicas), "value": "v1"},
		}
		if err := c.client.Post().Namespace(c.ns).Resource("configmaps").Body(cm).Do(ctx).Error(); err != nil {
			return err
		}
	}
	if err := c.converged(ctx); err != nil {
		return err
	}

	step("You scale parent-0 to %d and, right after, change its value to v2: two edits in a row,", replicas+2)
	c.log.say("   so a status write based on the first may meet the second: that is a 409, and a requeue.")
	if err := c.patch(ctx, "parent-0", fmt.Sprintf(`{"data":{"replicas":"%d"}}`, replicas+2)); err != nil {
		return err
	}
	if err := c.patch(ctx, "parent-0", `{"data":{"value":"v2"}}`); err != nil {
		return err
	}
	c.waitCache(ctx, func() bool { return c.parentData("parent-0", "value") == "v2" })
	if err := c.converged(ctx); err != nil {
		return err
	}

	step("Someone deletes a child of parent-1 by hand. Its delete event maps to parent-1's key.")
	kids := c.cms.Namespace(c.ns).List(labels.SelectorFromSet(labels.Set{roleLabel: "child", parentLabel: "parent-1"}))
	if len(kids) > 0 {
		if err := c.client.Delete().Namespace(c.ns).Resource("configmaps").Name(kids[0].Name).Do(ctx).Error(); err != nil {
			return err
		}
		c.log.say("   (deleted %s)", kids[0].Name)
		gone := kids[0].Name
		c.waitCache(ctx, func() bool { _, err := c.cms.Namespace(c.ns).Get(gone); return err != nil })
	}
	if err := c.converged(ctx); err != nil {
		return err
	}

	step("You scale parent-0 down to 1. The controller deletes the extra children.")
	if err := c.patch(ctx, "parent-0", `{"data":{"replicas":"1"}}`); err != nil {
		return err
	}
	c.waitCache(ctx, func() bool { return c.parentData("parent-0", "replicas") == "1" })
	if err := c.converged(ctx); err != nil {
		return err
	}
	c.log.say("\nEvery step converged.")
	return nil
}

func (c *controller) patch(ctx context.Context, name, body string) error {
	return c.client.Patch(types.MergePatchType).Namespace(c.ns).Resource("configmaps").Name(name).
		Body([]byte(body)).Do(ctx).Error()
}

// waitCache waits (up to 30s) until cond holds in the cache: our own
// edit reached it. Checking convergence before that would find the old,
// converged state.
func (c *controller) waitCache(ctx context.Context, cond func() bool) {
	for deadline := time.Now().Add(30 * time.Second); !cond() && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(20 * time.Millisecond)
	}
}

func (c *controller) parentData(name, field string) string {
	p, err := c.cms.Namespace(c.ns).Get(name)
	if err != nil {
		return ""
	}
	return p.Data[field]
}

// converged waits until, in the cache, every parent has the children it
// asks for, each with its value, and its status says so. Reading the cache
// is free, so the demo may poll it.
func (c *controller) converged(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		// In sync, and still in sync a moment later with nothing queued:
		// a status write in flight can still change things.
		if c.inSync() && c.queue.Len() == 0 {
			time.Sleep(300 * time.Millisecond)
			if c.inSync() && c.queue.Len() == 0 {
				c.log.say("   converged.")
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the controller did not converge within 60s (%s)", c.stats.String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *controller) inSync() bool {
	cms := c.cms.Namespace(c.ns)
	for _, p := range cms.List(labels.SelectorFromSet(labels.Set{roleLabel: "parent"})) {
		want, _ := strconv.Atoi(p.Data["replicas"])
		kids := cms.List(labels.SelectorFromSet(labels.Set{roleLabel: "child", parentLabel: p.Name}))
		if len(kids) != want || p.Annotations[countAnnotation] != strconv.Itoa(want) {
			return false
		}
		for _, k := range kids {
			if k.Data["value"] != p.Data["value"] {
				return false
			}
		}
	}
	return true
}
