import Agent
import BusTestSupport
import Foundation
import Testing

/// What `Credentials.load` says when the stored session cannot be used: what is wrong, where,
/// and what to do.
@Suite struct CredentialsFileTests {
    @Test func aFolderInPlaceOfTheFileSaysToRemoveIt() throws {
        let folder = try TemporaryFolder("credentials")
        let path = folder.path + "/credentials.json"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let error = try #require(throws: AgentError.self) { try Credentials.load(from: path) }
        #expect(error.message == "The credentials file \(path) is a folder: remove it, then run `nearplay login` again.")
        #expect(error.code == "notLoggedIn")
    }

    @Test func aMissingFileSaysToLogIn() throws {
        let folder = try TemporaryFolder("credentials")
        let error = try #require(throws: AgentError.self) { try Credentials.load(from: folder.path + "/none.json") }
        #expect(error.message.contains("run `nearplay login`"))
        #expect(error.code == "notLoggedIn")
    }
}
