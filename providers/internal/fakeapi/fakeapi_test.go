package fakeapi

import "testing"

func TestScript(t *testing.T) {
	s := NewScript[string, int]([]string{"a"})
	s.Enqueue("b")
	for i, want := range []string{"a", "b", ""} {
		resp, n, ok := s.Next(i * 10)
		if resp != want || n != i+1 || ok != (want != "") {
			t.Fatalf("next %d: %q %d %v", i, resp, n, ok)
		}
	}
	if got := s.Requests(); len(got) != 3 || got[2] != 20 || s.Pending() != 0 {
		t.Fatalf("requests %v pending %d", got, s.Pending())
	}
}

func TestLastRequest(t *testing.T) {
	s := NewScript[string, int](nil)
	s.Next(1)
	s.Next(2)
	if got := s.LastRequest(t); got != 2 {
		t.Fatalf("last request %d", got)
	}
}
