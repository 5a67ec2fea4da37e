package sharedinformer

import (
	"errors"
	"fmt"

	"github.com/listwatch/informer/internal/nilcheck"
)

// ErrNotSynced is the Cause of Ready's error: a syncer has not synced yet.
var ErrNotSynced = errors.New("not synced yet")

// Ready reports, without waiting, whether every syncer has synced: nil if
// so, or else a *NotSyncedError (its Cause ErrNotSynced, its Waited 0)
// naming each one not synced yet and its last failure to list or watch,
// such as a 403. A syncer released by its factory's last holder counts as
// ready, as WaitForCacheSync skips it.
//
// It is the readiness half of a health check: serve it on a readiness
// probe, so that a replica whose caches are not filled yet takes no
// traffic, and leaderelection's Elector.Healthy on the liveness probe.
// Once synced, an informer stays ready, as client-go's does: it keeps
// serving its cache through a broken watch while the reflector retries.
// How far the cache trails what the reflector has received is the
// listwatch_informer_applied_lag_revisions gauge (see ExportedMetrics):
// alert on it; a probe that restarted replicas on it would throw their
// caches away just when the API server is slow.
func Ready(syncers ...Syncer) error {
	if err := checkSyncers("Ready", syncers); err != nil {
		return err
	}
	if err := notSynced(ErrNotSynced, 0, syncers); err != nil {
		return err
	}
	return nil
}

// checkSyncers refuses a nil syncer, naming the caller and its place.
func checkSyncers(caller string, syncers []Syncer) error {
	for i, s := range syncers {
		if nilcheck.IsNil(s) {
			return fmt.Errorf("sharedinformer: %s: syncer %d is nil (an AddEventHandler or InformerFor whose error was ignored?)", caller, i)
		}
	}
	return nil
}
