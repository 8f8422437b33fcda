module github.com/kosong-host/kosong-host

go 1.26.8
