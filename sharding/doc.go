// Package sharding spreads one controller's objects over all of its
// replicas: each replica owns part of them, caches only those, and
// reconciles only those. See docs/14-sharding.md.
package sharding
