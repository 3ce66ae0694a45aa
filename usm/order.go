package usm

import "errors"

// orderer is implemented by queues whose runtime can make another queue
// wait for them on the device: a barrier or marker on the producer gives an
// event, and a barrier on the consumer waits for that event, so the host
// never blocks (RATIONALE.md, "Queue ordering on the device").
type orderer interface {
	Queue
	// OrderBefore makes every command submitted to consumer after it
	// returns start only once every command submitted to the receiver
	// before it was called has completed, without waiting on the host.
	// The consumer may be the receiver itself. An error matching
	// ErrNotSupported means this runtime cannot order that consumer (a
	// queue of another runtime, another context); nothing was submitted
	// and the caller may wait on the host instead.
	OrderBefore(consumer Queue) error
}

// Order makes the commands submitted to consumer from now on run after
// the commands already submitted to producer. It orders on the device when
// producer's runtime accepts consumer (the queues of the opencl,
// levelzero and dpctl backends have an OrderBefore method), and waits on the host for producer only where nothing else is
// possible: producer has no OrderBefore, it refuses consumer with
// ErrNotSupported, or consumer is nil (the consumer is the host). A nil
// producer has nothing pending.
func Order(producer, consumer Queue) error {
	if producer == nil {
		return nil
	}
	if o, ok := producer.(orderer); ok && consumer != nil {
		err := o.OrderBefore(consumer)
		if err == nil || !errors.Is(err, ErrNotSupported) {
			return err
		}
	}
	return producer.Wait()
}
