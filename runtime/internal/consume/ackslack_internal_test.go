package consume

import (
	"testing"
	"time"
)

// What the session took over the last span as long as the wait decides,
// not a rate over 100 ms multiplied by the wait.
func TestDeliveryRateFits(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	var r deliveryRate
	r.took(t0, 20)
	r.took(t0.Add(150*time.Millisecond), 20)
	r.took(t0.Add(160*time.Millisecond), 20)
	if !r.fits(t0.Add(200*time.Millisecond), 8*time.Second, 20) {
		t.Errorf("three deliveries taken, a slack of 20: an 8 s wait does not fit")
	}
	for i := range 17 { // 20 within 1.2 s
		r.took(t0.Add(time.Second+time.Duration(i)*10*time.Millisecond), 20)
	}
	now := t0.Add(1300 * time.Millisecond)
	if r.fits(now, 8*time.Second, 20) {
		t.Errorf("20 deliveries within the last 1.3 s, a slack of 20: an 8 s wait fits")
	}
	if !r.fits(now, time.Second, 20) {
		t.Errorf("20 deliveries within the last 1.3 s, a slack of 20: a 1 s wait does not fit")
	}
	// A slack above what is kept: the rate over the latest maxTakenKept.
	var big deliveryRate
	for i := range maxTakenKept {
		big.took(t0.Add(time.Duration(i)*time.Millisecond), 4096) // 1,000 a second
	}
	now = t0.Add(maxTakenKept * time.Millisecond)
	if !big.fits(now, 3*time.Second, 4096) || big.fits(now, 5*time.Second, 4096) {
		t.Errorf("1,000 a second, a slack of 4096: want a 3 s wait to fit and a 5 s one not")
	}
	if len(big.recent) != maxTakenKept {
		t.Errorf("kept %d times, want %d", len(big.recent), maxTakenKept)
	}
}
