// Package batch takes what is ready on a channel, for work done in groups
// (group commits, a sync for many commits).
package batch

// Drain appends to group what ch holds ready, without waiting, until group
// holds limit items (no bound when limit <= 0), ch is empty or ch is
// closed, and returns group.
func Drain[T any](ch <-chan T, group []T, limit int) []T {
	for limit <= 0 || len(group) < limit {
		select {
		case v, ok := <-ch:
			if !ok {
				return group
			}
			group = append(group, v)
		default:
			return group
		}
	}
	return group
}
