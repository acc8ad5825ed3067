package enrollments

import "context"

// Batched marks ctx as a runner transaction's, whose enrollment saves wait
// for the commit.
func Batched(ctx context.Context) context.Context { return context.WithValue(ctx, batchedKey{}, true) }

// Store returns the service's store.
func (svc *Service) Store() *BunStore { return svc.store }
