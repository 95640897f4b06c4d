package batch

import (
	"slices"
	"testing"
)

func TestDrain(t *testing.T) {
	ch := make(chan int, 8)
	for i := range 5 {
		ch <- i
	}
	if got := Drain(ch, []int{-1}, 3); !slices.Equal(got, []int{-1, 0, 1}) {
		t.Errorf("limit 3 = %v, want [-1 0 1]", got)
	}
	if got := Drain(ch, nil, 0); !slices.Equal(got, []int{2, 3, 4}) {
		t.Errorf("no limit = %v, want the 3 left, then stop on the empty channel", got)
	}
	ch <- 5
	close(ch)
	if got := Drain(ch, nil, 0); !slices.Equal(got, []int{5}) {
		t.Errorf("closed = %v, want [5], then stop on the closed channel", got)
	}
}
