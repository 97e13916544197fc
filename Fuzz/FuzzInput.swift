// Shared by every fuzz target: libFuzzer's input as bytes.

/// The input libFuzzer hands to `LLVMFuzzerTestOneInput`, copied into an array.
func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
    guard let data, count > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: count))
}
