module github.com/cosci-dev/cosci/scripts/pdfcompare

go 1.26.8

require (
	github.com/cosci-dev/cosci v0.0.0
	github.com/klippa-app/go-pdfium v1.21.4
	golang.org/x/text v0.43.0
)

require (
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/jolestar/go-commons-pool/v2 v2.1.2 // indirect
	github.com/tetratelabs/wazero v1.12.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/net v0.60.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)

replace github.com/cosci-dev/cosci => ../..
