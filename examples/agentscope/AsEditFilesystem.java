/*
 * Part of as-edit (https://github.com/…/as-edit), dual-licensed MIT or Apache-2.0.
 * Written for as-edit; it implements AgentScope's interface, it contains no AgentScope code.
 */
package io.agentscope.harness.agent.filesystem.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.agentscope.core.agent.RuntimeContext;
import io.agentscope.harness.agent.filesystem.AbstractFilesystem;
import io.agentscope.harness.agent.filesystem.model.EditResult;
import io.agentscope.harness.agent.filesystem.model.ExecuteResponse;
import io.agentscope.harness.agent.filesystem.model.FileData;
import io.agentscope.harness.agent.filesystem.model.FileDownloadResponse;
import io.agentscope.harness.agent.filesystem.model.FileInfo;
import io.agentscope.harness.agent.filesystem.model.FileUploadResponse;
import io.agentscope.harness.agent.filesystem.model.GlobResult;
import io.agentscope.harness.agent.filesystem.model.GrepMatch;
import io.agentscope.harness.agent.filesystem.model.GrepResult;
import io.agentscope.harness.agent.filesystem.model.LsResult;
import io.agentscope.harness.agent.filesystem.model.ReadResult;
import io.agentscope.harness.agent.filesystem.model.WriteResult;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * AgentScope's sandbox filesystem over the as-edit helper: every filesystem method is one
 * {@code as-edit --request-b64} command run through the backend's {@link #execute}, so a
 * sandbox image needs the helper binary and nothing else (no coreutils, GNU grep, find, sed,
 * base64 or python3).
 *
 * <h2>Wiring it in</h2>
 *
 * <pre>{@code
 * AbstractSandboxFilesystem shell = new MyDockerSandboxFilesystem(...); // today's backend
 * // copy the static helper into the image or container first (as-edit's README: Installing)
 * AbstractSandboxFilesystem fs = new AsEditFilesystem(shell, "/opt/as-edit/as-edit");
 * // hand fs to the agent wherever shell was handed before; execute, uploadFiles,
 * // downloadFiles and id still reach shell, and every method falls back to shell's own
 * }</pre>
 *
 * <h2>The command and its answer</h2>
 *
 * Each call sends {@code 'HELPER' --request-b64 'B64'} (both single-quoted, so it means the same
 * behind {@code sh -c} and behind backends that split with {@code shlex}), B64 being the base64 of
 * one protocol-4 JSON request, and reads the last output line starting with {@code __RESULT__}
 * with Jackson. Long answers are followed through their {@code next} field, page by page, each
 * page at most {@value #MAX_BYTES} bytes, so no answer is silently cut at a backend's 512 KiB
 * output bound. When the helper is unavailable (exit 126 or 127, or no result line) the method
 * calls the backend's own method with the same arguments and returns what it returns; a
 * {@code write_failed} answer of {@link #write} or {@link #edit} (the target untouched) does too.
 *
 * <h2>Semantics</h2>
 *
 * LocalFilesystem's where the shell version ({@code BaseSandboxFilesystem}) is wrong, the shell
 * version's strings and formats elsewhere; the whole table is in as-edit's {@code
 * examples/agentscope/README.md}. In short: {@code ls} lists dotfiles and names holding
 * {@code :}, tabs or newlines exactly, a missing directory (or a file) is an error; {@code read}
 * past the last line is an error (LocalFilesystem's count: a final newline is followed by one
 * more, empty, line), a file that is not UTF-8 text (a NUL byte or invalid UTF-8 in
 * the lines read) comes whole as base64 whatever its extension; {@code write} is
 * create-exclusive in one atomic step (no check-then-write window); {@code edit} normalizes CRLF
 * as LocalFilesystem does and replaces the file atomically; {@code grep} and {@code glob} walk
 * without following symlinks, list only regular files, and are rooted at the path given or the
 * backend's working directory (never {@code /}), their globs with rg's meaning (without a
 * {@code /}: the name at any depth; with one: the whole path under the root); {@code delete}
 * removes a directory tree without following symlinks (the helper's {@code
 * "recursive":true}); {@code move} moves files,
 * directories and symlinks (a link itself, not what it leads to), never into or over a
 * directory.
 * A file name that is not UTF-8 is decoded with U+FFFD for each bad byte.
 *
 * <h2>Exceptions</h2>
 *
 * <ul>
 *   <li>{@link IllegalArgumentException} from {@link #delete} and {@link #move} for a null or
 *       blank path or one with a {@code ..} component ({@link AbstractFilesystem#validatePath},
 *       as every AgentScope implementation does), and from the constructor for a null backend or
 *       a null or blank helper path.
 *   <li>Whatever the backend's {@code execute}, {@code uploadFiles}, {@code downloadFiles} or
 *       fallback methods throw passes through unchanged.
 * </ul>
 *
 * Nothing else is thrown: a null path, pattern, string or content is the method's failure
 * result ({@code invalid_argument}, as the helper refuses it), except where the interface allows
 * a null ({@code grep}'s path and glob; {@code exists(null)} is {@code false}), and so is a
 * helper answer that does not parse ({@code …: unexpected helper output: …}).
 */
public final class AsEditFilesystem implements AbstractSandboxFilesystem {

    /** The bound of one answer line: half the backends' 512 KiB output bound. */
    static final int MAX_BYTES = 262_144;

    /** Requests above this many base64 bytes are not put in argv (128 KiB MAX_ARG_STRLEN). */
    static final int MAX_ARG_B64 = 100 * 1024;

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SecureRandom RANDOM = new SecureRandom();

    private final AbstractSandboxFilesystem backend;
    private final String helperPath;

    /**
     * @param backend the sandbox the helper runs in, and the fallback for every method
     * @param helperPath the helper's absolute path inside the sandbox
     * @throws IllegalArgumentException for a null backend or a null or blank helper path
     */
    public AsEditFilesystem(AbstractSandboxFilesystem backend, String helperPath) {
        if (backend == null) {
            throw new IllegalArgumentException("backend must not be null");
        }
        if (helperPath == null || helperPath.isBlank()) {
            throw new IllegalArgumentException("helperPath must not be null or blank");
        }
        this.backend = backend;
        this.helperPath = helperPath;
    }

    // ==================== Delegated ====================

    @Override
    public String id() {
        return backend.id();
    }

    @Override
    public ExecuteResponse execute(RuntimeContext rc, String command, Integer timeoutSeconds) {
        return backend.execute(rc, command, timeoutSeconds);
    }

    @Override
    public List<FileUploadResponse> uploadFiles(
            RuntimeContext rc, List<Map.Entry<String, byte[]>> files) {
        return backend.uploadFiles(rc, files);
    }

    @Override
    public List<FileDownloadResponse> downloadFiles(RuntimeContext rc, List<String> paths) {
        return backend.downloadFiles(rc, paths);
    }

    // ==================== ls ====================

    @Override
    public LsResult ls(RuntimeContext rc, String path) {
        ObjectNode req = op("list");
        putPath(req, "path", path);
        req.put("hidden", true).put("vcs", true).put("limit", 100_000);
        List<JsonNode> entries = new ArrayList<>();
        Answer a = paged(rc, req, "entries", entries);
        if (a.unavailable) {
            return backend.ls(rc, path);
        }
        if (a.error != null) {
            if ("file_not_found".equals(a.error)) {
                return LsResult.fail("Directory '" + path + "' not found: " + a.detail);
            }
            return LsResult.fail("Error listing '" + path + "': " + a.errorText());
        }
        // A symlink is listed as what it leads to, with that one's size and mtime
        // (LocalFilesystem's Files.readAttributes follows it, the shell's [ -d ] and [ -f ]
        // too) and left out when dangling: one stat learns where the links lead.
        Map<Integer, JsonNode> resolved = new HashMap<>();
        List<Integer> links = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            if ("symlink".equals(entries.get(i).path("type").asText())) {
                links.add(i);
            }
        }
        for (int from = 0; from < links.size(); from += 256) {
            ObjectNode st = op("stat");
            ArrayNode paths = st.putArray("paths");
            List<Integer> chunk = links.subList(from, Math.min(links.size(), from + 256));
            for (int i : chunk) {
                JsonNode e = entries.get(i);
                if (e.has("path_b64")) {
                    paths.addObject().put("path_b64", e.get("path_b64").asText());
                } else {
                    paths.add(e.get("path").asText());
                }
            }
            List<JsonNode> stats = new ArrayList<>();
            Answer s = paged(rc, st, "entries", stats);
            if (s.unavailable) {
                return backend.ls(rc, path);
            }
            if (s.error != null || stats.size() != chunk.size()) {
                return LsResult.fail("Error listing '" + path + "': " + s.errorText());
            }
            for (int k = 0; k < chunk.size(); k++) {
                resolved.put(chunk.get(k), stats.get(k));
            }
        }
        List<FileInfo> out = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            JsonNode e = entries.get(i);
            JsonNode to = resolved.get(i);
            String type = e.path("type").asText();
            long size = e.path("size").asLong();
            long ns = e.path("mtime_ns").asLong();
            if (to != null) {
                // outside_root (never with this class: no --root) has no stat: left out too.
                type = to.path("resolved").asText("missing");
                if (!to.has("resolved_size")) {
                    continue;
                }
                size = to.path("resolved_size").asLong();
                ns = to.path("resolved_mtime_ns").asLong();
            }
            long ms = ns / 1_000_000L;
            if ("missing".equals(type)) {
                continue;
            }
            if ("dir".equals(type)) {
                out.add(FileInfo.ofDir(name(e), ms));
            } else {
                out.add(FileInfo.ofFile(name(e), size, ms));
            }
        }
        out.sort(Comparator.comparing(FileInfo::path));
        return LsResult.success(out);
    }

    // ==================== read ====================

    @Override
    public ReadResult read(RuntimeContext rc, String filePath, int offset, int limit) {
        int start = Math.max(0, offset);
        ObjectNode req = op("read");
        putPath(req, "path", filePath);
        req.put("start", start + 1L);
        if (limit > 0) {
            req.put("limit", limit);
        }
        StringBuilder text = new StringBuilder();
        long lines = -1;
        int got = 0;
        while (true) {
            Answer a = call(rc, req);
            if (a.unavailable) {
                return backend.read(rc, filePath, offset, limit);
            }
            if ("not_text".equals(a.error)) {
                return readRaw(rc, filePath, offset, limit, true);
            }
            if ("file_not_found".equals(a.error)) {
                return ReadResult.fail("File '" + filePath + "': file_not_found");
            }
            if ("invalid_argument".equals(a.error)
                    && a.detail != null
                    && a.detail.contains("cannot hold line")) {
                // A line longer than one answer (the helper refuses it whole
                // rather than cut it): the bytes instead, the lines cut here.
                return readRaw(rc, filePath, offset, limit, false);
            }
            if (a.error != null) {
                return ReadResult.fail("Error reading file '" + filePath + "': " + a.errorText());
            }
            JsonNode r = a.result;
            if (r.has("cut_lines")) {
                // A line longer than one answer: the bytes instead, the lines cut here.
                return readRaw(rc, filePath, offset, limit, false);
            }
            text.append(r.path("text").asText());
            got += Math.max(0, r.path("end").asInt() - r.path("start").asInt() + 1);
            if (r.has("lines")) {
                lines = r.get("lines").asLong();
            }
            JsonNode next = r.get("next");
            if (next == null || (limit > 0 && got >= limit)) {
                break;
            }
            merge(req, next);
            if (limit > 0) {
                req.put("limit", limit - got);
            }
        }
        if (lines > 0 && start >= lines && text.length() == 0) {
            // Past the last line: LocalFilesystem's split("\n", -1) counts the empty "line"
            // after a final newline, so offset == lines is an empty read there, and its count
            // is one more.
            Boolean nl = endsInNewline(rc, filePath);
            if (nl == null) {
                return backend.read(rc, filePath, offset, limit);
            }
            long counted = nl ? lines + 1 : lines;
            if (start < counted) {
                return ReadResult.success(new FileData("", "utf-8"));
            }
            return ReadResult.fail(
                    "Line offset " + start + " exceeds file length (" + counted + " lines)");
        }
        return textResult(text.toString(), lines);
    }

    /**
     * Whether the file's last byte is a newline (two raw reads: its size, then that byte);
     * {@code null}: the helper is unavailable.
     */
    private Boolean endsInNewline(RuntimeContext rc, String filePath) {
        ObjectNode req = op("read");
        putPath(req, "path", filePath);
        // Past the end (the largest offset taken, 2^53 - 1): no bytes, and "size" where the
        // reading met the end.
        req.put("raw", true).put("offset", 9_007_199_254_740_991L).put("length", 1);
        Answer a = call(rc, req);
        if (a.unavailable) {
            return null;
        }
        long size = a.error == null ? a.result.path("size").asLong() : 0;
        if (size <= 0) {
            return false;
        }
        req.put("offset", size - 1);
        a = call(rc, req);
        if (a.unavailable) {
            return null;
        }
        return a.error == null && "Cg==".equals(a.result.path("b64").asText());
    }

    private static ReadResult textResult(String text, long lines) {
        if (lines == 0) {
            return ReadResult.success(
                    new FileData("System reminder: File exists but has empty contents", "utf-8"));
        }
        if (text.endsWith("\n")) {
            text = text.substring(0, text.length() - 1);
        }
        return ReadResult.success(new FileData(text, "utf-8"));
    }

    /** The whole file's bytes as base64 ({@code binary}), or its lines cut from them. */
    private ReadResult readRaw(
            RuntimeContext rc, String filePath, int offset, int limit, boolean binary) {
        ObjectNode req = op("read");
        putPath(req, "path", filePath);
        req.put("raw", true).put("offset", 0);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        while (true) {
            Answer a = call(rc, req);
            if (a.unavailable) {
                return backend.read(rc, filePath, offset, limit);
            }
            if ("file_not_found".equals(a.error)) {
                return ReadResult.fail("File '" + filePath + "': file_not_found");
            }
            if (a.error != null) {
                return ReadResult.fail("Error reading file '" + filePath + "': " + a.errorText());
            }
            try {
                bytes.writeBytes(Base64.getDecoder().decode(a.result.path("b64").asText()));
            } catch (IllegalArgumentException e) {
                return ReadResult.fail(
                        "Error reading file '" + filePath + "': unexpected helper output: " + a.raw);
            }
            if (a.result.path("eof").asBoolean() || !a.result.has("next")) {
                break;
            }
            merge(req, a.result.get("next"));
        }
        if (binary) {
            return ReadResult.success(
                    new FileData(Base64.getEncoder().encodeToString(bytes.toByteArray()), "base64"));
        }
        String all = bytes.toString(StandardCharsets.UTF_8);
        if (all.isEmpty()) {
            return textResult("", 0);
        }
        // Lines as the helper counts them: a final newline ends the last line.
        List<String> split = new ArrayList<>(List.of(all.split("\n", -1)));
        if (all.endsWith("\n")) {
            split.remove(split.size() - 1);
        }
        int start = Math.max(0, offset);
        // LocalFilesystem's count: the empty "line" after a final newline too.
        int counted = all.endsWith("\n") ? split.size() + 1 : split.size();
        if (start >= counted) {
            return ReadResult.fail(
                    "Line offset " + start + " exceeds file length (" + counted + " lines)");
        }
        int end = limit > 0 ? (int) Math.min((long) start + limit, split.size()) : split.size();
        StringBuilder sb = new StringBuilder();
        for (int i = start; i < end; i++) {
            sb.append(split.get(i)).append('\n');
        }
        return textResult(sb.toString(), split.size());
    }

    // ==================== write ====================

    @Override
    public WriteResult write(RuntimeContext rc, String filePath, String content) {
        if (filePath == null || content == null) {
            return WriteResult.fail(
                    "Failed to write file '" + filePath + "': invalid_argument: a null "
                            + (filePath == null ? "path" : "content"));
        }
        ObjectNode req = txOp("create");
        putPath(req, "path", filePath);
        req.put("content", content).put("overwrite", false);
        if (b64Length(req) <= MAX_ARG_B64) {
            Answer a = call(rc, req);
            if (a.unavailable || "write_failed".equals(a.error)) {
                return backend.write(rc, filePath, content);
            }
            return writeAnswer(filePath, a);
        }
        // Too large for argv: upload under a hidden name beside the target, then one
        // create-exclusive move (RENAME_NOREPLACE) puts it in place or refuses. A stat first:
        // without a helper nothing is uploaded (the backend writes), and a target already
        // there is refused before the upload (the move still decides: no window).
        ObjectNode probe = op("stat");
        probe.putArray("paths").add(filePath);
        Answer seen = call(rc, probe);
        if (seen.unavailable) {
            return backend.write(rc, filePath, content);
        }
        if (seen.error == null
                && !"missing".equals(seen.result.path("entries").path(0).path("type").asText())) {
            return writeAnswer(filePath, exists());
        }
        int slash = filePath.lastIndexOf('/');
        String dir = slash < 0 ? "" : filePath.substring(0, slash + 1);
        String temp = dir + ".as-edit-upload-" + Long.toHexString(RANDOM.nextLong()) + ".tmp";
        List<FileUploadResponse> up =
                backend.uploadFiles(
                        rc, List.of(Map.entry(temp, content.getBytes(StandardCharsets.UTF_8))));
        if (up.isEmpty() || !up.get(0).isSuccess()) {
            String err = up.isEmpty() ? "upload returned no response" : up.get(0).error();
            return WriteResult.fail("Failed to write file '" + filePath + "': " + err);
        }
        ObjectNode mv = txOp("move");
        putPath(mv, "path", temp);
        putPath(mv, "to", filePath);
        mv.put("overwrite", false);
        Answer a = call(rc, mv);
        if (a.unavailable) {
            backend.delete(rc, temp); // the helper went away between two commands
            return backend.write(rc, filePath, content);
        }
        if (a.error != null) {
            ObjectNode del = txOp("delete");
            putPath(del, "path", temp);
            call(rc, del);
        }
        return writeAnswer(filePath, a);
    }

    private static Answer exists() {
        Answer a = new Answer();
        a.error = "file_exists";
        return a;
    }

    private static WriteResult writeAnswer(String filePath, Answer a) {
        if (a.error == null) {
            return WriteResult.ok(filePath);
        }
        if ("file_exists".equals(a.error)
                || ("file_not_found".equals(a.error)
                        && a.detail != null
                        && a.detail.endsWith("is a directory, not a regular file"))) {
            return WriteResult.fail(
                    "Cannot write to "
                            + filePath
                            + " because it already exists. Read and then make an"
                            + " edit, or write to a new path.");
        }
        return WriteResult.fail("Failed to write file '" + filePath + "': " + a.errorText());
    }

    // ==================== edit ====================

    @Override
    public EditResult edit(
            RuntimeContext rc,
            String filePath,
            String oldString,
            String newString,
            boolean replaceAll) {
        ObjectNode req = JSON.createObjectNode();
        putPath(req, "path", filePath);
        req.putArray("edits")
                .addObject()
                .put("old", oldString)
                .put("new", newString)
                .put("replace_all", replaceAll);
        if (b64Length(req) > MAX_ARG_B64) {
            return backend.edit(rc, filePath, oldString, newString, replaceAll);
        }
        Answer a = call(rc, req);
        if (a.unavailable || "write_failed".equals(a.error)) {
            return backend.edit(rc, filePath, oldString, newString, replaceAll);
        }
        if (a.error == null) {
            return EditResult.ok(filePath, a.result.path("count").asInt());
        }
        switch (a.error) {
            case "file_not_found":
                return EditResult.fail("Error: File '" + filePath + "' not found");
            case "string_not_found":
            case "empty":
                return EditResult.fail("Error: String not found in file: '" + oldString + "'");
            case "multiple_occurrences":
                return EditResult.fail(
                        "Error: String '"
                                + oldString
                                + "' appears multiple times. Use replaceAll=true to replace all"
                                + " occurrences.");
            default:
                return EditResult.fail(
                        "Error editing file '" + filePath + "': " + a.errorText());
        }
    }

    // ==================== grep ====================

    @Override
    public GrepResult grep(RuntimeContext rc, String pattern, String path, String glob) {
        ObjectNode req = op("grep");
        req.put("pattern", pattern);
        if (path != null) {
            putPath(req, "path", path); // absent: the working directory, names shown bare
        }
        if (glob != null && !glob.isBlank()) {
            req.put("glob", glob);
        }
        req.put("hidden", true).put("vcs", true).put("limit", 100_000);
        req.put("max_columns", 1_000_000_000L);
        List<JsonNode> found = new ArrayList<>();
        Answer a = paged(rc, req, "matches", found);
        if (a.unavailable) {
            return backend.grep(rc, pattern, path, glob);
        }
        if ("file_not_found".equals(a.error)) {
            return GrepResult.success(List.of());
        }
        if (a.error != null) {
            return GrepResult.fail("Error searching for '" + pattern + "': " + a.errorText());
        }
        List<GrepMatch> out = new ArrayList<>();
        for (JsonNode m : found) {
            String text = m.path("text").asText();
            // LocalFilesystem's rg parse drops a CRLF line's \r with its \n.
            while (text.endsWith("\r") || text.endsWith("\n")) {
                text = text.substring(0, text.length() - 1);
            }
            out.add(new GrepMatch(name(m), m.path("line").asInt(), text));
        }
        // One defined order (the shell's is the directory's, rg's its threads'): by path as
        // Java compares strings, each file's lines in order (the sort is stable).
        out.sort(Comparator.comparing(GrepMatch::path));
        return GrepResult.success(out);
    }

    // ==================== glob ====================

    @Override
    public GlobResult glob(RuntimeContext rc, String pattern, String path) {
        if (pattern == null) {
            return GlobResult.fail("Error in glob 'null': invalid_argument: a null pattern");
        }
        // rg's --glob meaning, as grep's glob: a pattern without '/' matches the name at any
        // depth, one with '/' the whole path under P ('**/' matching zero or more directories);
        // a leading '/' anchors at P ("./", the helper's spelling of it).
        String p = pattern;
        if (p.startsWith("/")) {
            while (p.startsWith("/")) {
                p = p.substring(1);
            }
            p = "./" + p;
        }
        ObjectNode req = op("glob");
        req.put("pattern", p);
        if (path != null && !"/".equals(path)) {
            putPath(req, "path", path); // else the workspace (the working directory), never /
        }
        req.put("hidden", true).put("vcs", true).put("limit", 100_000);
        List<JsonNode> entries = new ArrayList<>();
        Answer a = paged(rc, req, "entries", entries);
        if (a.unavailable) {
            return backend.glob(rc, pattern, path);
        }
        if ("file_not_found".equals(a.error)) {
            return GlobResult.success(List.of());
        }
        if (a.error != null) {
            return GlobResult.fail("Error in glob '" + pattern + "': " + a.errorText());
        }
        List<FileInfo> out = new ArrayList<>();
        for (JsonNode e : entries) {
            out.add(
                    FileInfo.ofFile(
                            name(e),
                            e.path("size").asLong(),
                            e.path("mtime_ns").asLong() / 1_000_000L));
        }
        out.sort(Comparator.comparing(FileInfo::path));
        return GlobResult.success(out);
    }

    // ==================== delete, move, exists ====================

    @Override
    public WriteResult delete(RuntimeContext rc, String path) {
        AbstractFilesystem.validatePath(path);
        ObjectNode req = txOp("delete");
        putPath(req, "path", path);
        req.put("recursive", true);
        Answer a = call(rc, req);
        if (a.unavailable) {
            return backend.delete(rc, path);
        }
        if (a.error == null || ("file_not_found".equals(a.error) && isMissing(a.detail))) {
            return WriteResult.ok(path); // idempotent, as both AgentScope versions are
        }
        return WriteResult.fail("Error deleting '" + path + "': " + a.errorText());
    }

    @Override
    public WriteResult move(RuntimeContext rc, String fromPath, String toPath) {
        AbstractFilesystem.validatePath(fromPath);
        AbstractFilesystem.validatePath(toPath);
        ObjectNode req = txOp("move");
        putPath(req, "path", fromPath);
        putPath(req, "to", toPath);
        req.put("overwrite", true);
        Answer a = call(rc, req);
        if (a.unavailable) {
            return backend.move(rc, fromPath, toPath);
        }
        if (a.error == null) {
            return WriteResult.ok(toPath);
        }
        if ("file_not_found".equals(a.error) && isMissing(a.detail) && !exists(rc, fromPath)) {
            return WriteResult.fail("Source does not exist: " + fromPath);
        }
        return WriteResult.fail(
                "Error moving '" + fromPath + "' to '" + toPath + "': " + a.errorText());
    }

    @Override
    public boolean exists(RuntimeContext rc, String path) {
        if (path == null || path.isBlank()) {
            return false;
        }
        ObjectNode req = op("stat");
        req.putArray("paths").add(path);
        Answer a = call(rc, req);
        if (a.unavailable) {
            return backend.exists(rc, path);
        }
        if (a.error != null) {
            return false;
        }
        JsonNode e = a.result.path("entries").path(0);
        String type = e.path("type").asText("missing");
        if ("symlink".equals(type)) {
            type = e.path("resolved").asText("missing"); // test -e and Files.exists follow it
        }
        return !"missing".equals(type);
    }

    // ==================== The helper ====================

    /** One answer: {@code result} on success, else {@code error}; or the helper unavailable. */
    private static final class Answer {
        boolean unavailable;
        JsonNode result;
        String error;
        String detail;
        String raw;

        String errorText() {
            if (error == null) {
                return "";
            }
            if ("unexpected".equals(error)) {
                return "unexpected helper output: " + detail;
            }
            return detail != null ? error + ": " + detail : error;
        }
    }

    /** A read-side op, its answer bounded to one page. */
    private static ObjectNode op(String name) {
        return JSON.createObjectNode().put("op", name).put("max_bytes", MAX_BYTES);
    }

    /** A transaction op alone (a transaction of one): its answer is one short line. */
    private static ObjectNode txOp(String name) {
        return JSON.createObjectNode().put("op", name);
    }

    /** The single-quoted command: the same text for {@code sh -c} and shlex backends. */
    String command(JsonNode request) {
        String b64 =
                Base64.getEncoder()
                        .encodeToString(request.toString().getBytes(StandardCharsets.UTF_8));
        return quote(helperPath) + " --request-b64 " + quote(b64);
    }

    private static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    private static int b64Length(JsonNode request) {
        return (request.toString().getBytes(StandardCharsets.UTF_8).length + 2) / 3 * 4;
    }

    private Answer call(RuntimeContext rc, JsonNode request) {
        ExecuteResponse resp = backend.execute(rc, command(request), null);
        Answer a = new Answer();
        String out = resp.output() != null ? resp.output() : "";
        String line = null;
        for (String l : out.split("\n")) {
            if (l.startsWith("__RESULT__")) {
                line = l.endsWith("\r") ? l.substring(0, l.length() - 1) : l;
            }
        }
        if (line == null) {
            // exit 126/127 (not found, not executable) or no answer at all: the fallback.
            a.unavailable = true;
            return a;
        }
        try {
            JsonNode r = JSON.readTree(line.substring("__RESULT__".length()));
            if (r == null || !r.isObject()) {
                throw new IllegalStateException("not an object");
            }
            a.raw = line;
            if (r.has("error")) {
                a.error = r.get("error").asText();
                a.detail = r.has("detail") ? r.get("detail").asText() : null;
            } else {
                a.result = r;
            }
        } catch (Exception e) {
            a.error = "unexpected";
            a.detail = line.length() > 200 ? line.substring(0, 200) : line;
        }
        return a;
    }

    /** Runs {@code req} and every {@code next} page, collecting the {@code key} arrays. */
    private Answer paged(RuntimeContext rc, ObjectNode req, String key, List<JsonNode> into) {
        while (true) {
            Answer a = call(rc, req);
            if (a.unavailable || a.error != null) {
                return a;
            }
            for (JsonNode e : a.result.path(key)) {
                into.add(e);
            }
            JsonNode next = a.result.get("next");
            if (next == null || !a.result.path("truncated").asBoolean()) {
                return a;
            }
            merge(req, next);
        }
    }

    private static void merge(ObjectNode req, JsonNode next) {
        Iterator<Map.Entry<String, JsonNode>> it = next.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> f = it.next();
            req.set(f.getKey(), f.getValue());
        }
    }

    private static void putPath(ObjectNode req, String field, String path) {
        req.put(field, path);
    }

    /** An entry's name: {@code path}, or {@code path_b64} decoded (U+FFFD per bad byte). */
    private static String name(JsonNode e) {
        if (e.has("path")) {
            return e.get("path").asText();
        }
        String b64 = e.path("path_b64").asText();
        try {
            return new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException bad) {
            return b64; // not the helper's answer; shown as it came rather than thrown
        }
    }

    /** A {@code file_not_found} detail saying that nothing is there (not a wrong type). */
    private static boolean isMissing(String detail) {
        return detail != null && detail.endsWith("does not exist");
    }
}
