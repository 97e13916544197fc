// Fuzz target: trace files (JSON Lines, version 1): the header, each line, the issues reported.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTraceLines(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = fuzzBytes(data, count)
    if let result = try? TraceReader.read(bytes: bytes, name: "fuzz.jsonl") {
        for issue in result.issues { _ = "\(issue)" }
    }
    return 0
}
