// Fuzz target: lines on the agent's local API socket: requests as the agent reads them, and
// responses as the CLI reads them.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAgentRequests(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let line = String(decoding: fuzzBytes(data, count), as: UTF8.self)
    if let request = try? AgentRequest(line: line) {
        // What the agent accepted, the CLI can write again, and it means the same.
        precondition((try? AgentRequest(line: request.line)) == request, "\(request) did not survive its own line")
    }
    _ = try? AgentResponse(line: line)
    return 0
}
