// The tests' children are started with the `Spawn` product, which the demo and the benchmarks
// use too; re-exported so every test that imports BusTestSupport keeps `SpawnedProcess`.
@_exported import Spawn
