// `TemporaryFolder` lives in TestSupport, which suites without a bus (SensorsTests, RoundsTests)
// import alone; re-exported so every test that imports BusTestSupport keeps it.
@_exported import TestSupport
