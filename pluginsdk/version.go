package pluginsdk

// SDKVersion is the version of this SDK, reported to the host by Describe.
const SDKVersion = "0.2.0"
