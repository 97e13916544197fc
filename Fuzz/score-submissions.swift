// Fuzz target: the recording a score submission carries (the largest body the lobby takes, up to
// 1 MB), decoded as the lobby decodes it and verified by the lobby's own scoring.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScoreSubmissions(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = Data(fuzzBytes(data, count))
    guard let recording = try? JSONDecoder().decode(RoundRecording.self, from: bytes) else { return 0 }
    let verifier = ScoreVerifier()
    _ = try? verifier.checkCalibration(recording.calibration)
    if let honest = try? verifier.verify(claimedScore: 0, recording: recording) {
        _ = try? verifier.verify(claimedScore: honest.score, recording: recording)
    }
    return 0
}
