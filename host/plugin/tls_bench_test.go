package plugin

import "testing"

func BenchmarkMintIdentity(b *testing.B) {
	for b.Loop() {
		if _, err := newIdentity("x"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHandshake(b *testing.B) {
	hostCfg, bundle, _ := NewTLS("x")
	pluginCfg, _ := bundle.Config()
	for b.Loop() {
		if err := handshake(hostCfg, pluginCfg); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBundleConfig(b *testing.B) {
	_, bundle, _ := NewTLS("x")
	for b.Loop() {
		if _, err := bundle.Config(); err != nil {
			b.Fatal(err)
		}
	}
}
