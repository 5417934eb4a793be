package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// BenchmarkUpload sends a 1,000,000-row CSV (a plate reader's export, 24.8 MB) through
// the desk's upload: the multipart body read under the cap, the table read and typed
// (internal/dataset), stored compressed in a directory store, and announced (to the fake
// backend). It reports the CPU time per upload beside the wall clock (this machine is
// shared), the bytes allocated, and the process's peak resident memory, which sizes the
// desk for uploads at --max-upload-mb.
func BenchmarkUpload(b *testing.B) {
	var csv bytes.Buffer
	csv.WriteString("well,dose_mg,signal,day\n")
	rng := rand.New(rand.NewPCG(46, 1))
	for i := range 1_000_000 {
		fmt.Fprintf(&csv, "%c%02d,%d,%.4f,2026-11-%02d\n", 'A'+rune(i%8), i%12+1, i%5*10, 1+rng.Float64()*2, i%28+1)
	}
	td := labDesk(b)
	td.maxUpload = 64 << 20
	tok := td.csrf(b, "ada@lab")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", tok)
	fw, _ := mw.CreateFormFile("file", "plates.csv")
	_, _ = fw.Write(csv.Bytes())
	_ = mw.Close()
	b.SetBytes(int64(csv.Len()))
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := range b.N {
		// Another table each time: the same bytes are stored once and not read again.
		data := bytes.Replace(body.Bytes(), []byte("well,dose_mg"), fmt.Appendf(nil, "w%04d,dose_mg", i), 1)
		r := httptest.NewRequestWithContext(b.Context(), "POST", "/s/s-1/data", bytes.NewReader(data))
		r.Header.Set("Content-Type", mw.FormDataContentType())
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.Header.Set("X-Forwarded-Email", "ada@lab")
		for _, c := range td.cookies["ada@lab"] {
			r.AddCookie(c)
		}
		w := httptest.NewRecorder()
		td.h.ServeHTTP(w, r)
		if w.Code != 303 {
			b.Fatalf("upload: %d\n%.400s", w.Code, w.Body.String())
		}
	}
	b.StopTimer()
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS is the process's peak resident memory in bytes (Linux reports kilobytes).
func peakRSS() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss << 10
}
