package agent

// LandlockABI lets tests pretend the kernel has another Landlock ABI.
var LandlockABI = &landlockABI
