import Agent
import BusTestSupport
import Foundation
import Testing

/// `nearplay demo`, the README's main job, as a user runs it.
@Suite(.serialized) struct DemoTests {
    /// Demo folders that exist now.
    static func demoFolders() -> Set<String> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []).filter { $0.hasPrefix("nearplay-demo-") })
    }

    @Test(.timeLimit(.minutes(5))) func tellsTheWholeStoryAndLeavesNothingBehind() async throws {
        let before = Self.demoFolders()
        let folder = try TemporaryFolder()
        let demo = try ChildProcess(try builtExecutable("nearplay"), ["demo", "--json", "--samples", repositoryRootPath + "/Samples/rounds"],
                                    log: folder.path + "/demo.log")
        await demo.process.wait()
        #expect(demo.process.status == 0, "\(demo.output.suffix(2000))")
        struct Tagged: Decodable { var agent: String }
        let events = demo.output.split(separator: "\n").compactMap { line -> (String, AgentEvent)? in
            let data = Data(line.utf8)
            guard let tag = try? JSONDecoder().decode(Tagged.self, from: data),
                  let event = try? JSONDecoder().decode(AgentEvent.self, from: data) else { return nil }
            return (tag.agent, event)
        }
        // Alice's agent found Bob with his name and a distance; both saw three verified rounds and the end.
        #expect(events.contains { $0.0 == "alice" && $0.1.kind == .playerNearby && $0.1.player == "bob" && $0.1.name == "Bob Builder" && $0.1.distance != nil })
        #expect(events.contains { $0.0 == "bob" && $0.1.kind == .invitationReceived && $0.1.player == "alice" })
        #expect(events.filter { $0.0 == "alice" && $0.1.kind == .roundFinished }.count == 3)
        #expect(events.contains { $0.0 == "alice" && $0.1.kind == .gameFinished })
        #expect(events.contains { $0.1.kind == .unlocked })
        // Nothing left: no new demo folder, no process of its own still running.
        #expect(Self.demoFolders().subtracting(before).isEmpty)
        let leftovers = try String(contentsOfFile: "/proc/self/stat", encoding: .utf8).isEmpty ? [] : childrenOfPID(demo.process.pid)
        #expect(leftovers.isEmpty, "still running: \(leftovers)")
    }
}

let repositoryRootPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

/// Processes whose parent is `pid` (the demo's children would be re-parented, so also those
/// whose command line names a demo folder).
func childrenOfPID(_ pid: Int32) -> [String] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> String? in
        guard Int32(entry) != nil, let command = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8) else { return nil }
        let text = command.replacingOccurrences(of: "\0", with: " ")
        return text.contains("/tmp/nearplay-demo-") ? text : nil
    }
}
