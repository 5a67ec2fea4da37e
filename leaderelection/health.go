package leaderelection

import (
	"fmt"
	"time"
)

// Healthy reports an error when, at now, this candidate is in a term
// whose last successful renew was sent more than LeaseDuration plus
// HealthTolerance ago. By then a standby may lead, yet this term has not
// ended: OnStartedLeading has not returned after its context ended, or
// the elector's goroutine is stuck. Wire it to a liveness probe, so that
// such a process is restarted. A standby is healthy.
func (e *Elector) Healthy(now time.Time) error {
	e.mu.Lock()
	inTerm, last := e.inTerm, e.lastRenew
	e.mu.Unlock()
	limit := e.cfg.LeaseDuration + e.cfg.HealthTolerance
	if inTerm && now.Sub(last) > limit {
		return fmt.Errorf("leaderelection: lease %s last renewed %v ago, more than LeaseDuration plus HealthTolerance (%v), and the term has not ended",
			e.lease(), now.Sub(last).Round(time.Millisecond), limit)
	}
	return nil
}
