package faultproxy

// Blackhole makes the proxy a network partition: from now until Heal,
// nothing crosses it in either direction. Open connections stay open but
// go silent; new connections are accepted and then wait. So a request
// neither succeeds nor fails: it hangs until the client's own timeout or
// context ends it, as across a real partition. (CutAll and Refuse, by
// contrast, fail at once.) Bytes sent meanwhile are held, not dropped,
// and are delivered after Heal, as TCP's retransmission would deliver
// them. Blackholing while blackholed changes nothing.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed && p.partition == nil {
		p.partition = make(chan struct{})
	}
}

// Heal ends a Blackhole: held bytes flow and waiting connections are
// dialed upstream. Healing a proxy that is not blackholed changes nothing.
func (p *Proxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.partition != nil {
		close(p.partition)
		p.partition = nil
	}
}

// waitHealed returns true at once if the proxy is not blackholed, and
// otherwise waits for Heal (true) or for abandon to close (false).
func (p *Proxy) waitHealed(abandon <-chan struct{}) bool {
	p.mu.Lock()
	partition := p.partition
	p.mu.Unlock()
	if partition == nil {
		return true
	}
	select {
	case <-partition:
		return true
	case <-abandon:
		return false
	}
}
