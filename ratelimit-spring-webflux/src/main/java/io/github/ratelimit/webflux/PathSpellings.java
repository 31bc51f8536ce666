package io.github.ratelimit.webflux;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.UriUtils;

/**
 * The spellings of a request's path that the filter layer matches: the path as sent, and the path as a server that
 * cleans it up resolves it, when that differs. WebFlux's handler mappings match the path as sent, but Spring Cloud
 * Gateway merges repeated slashes when it forwards, and the service behind a gateway may resolve dot segments, decode
 * an encoded separator, drop path parameters or ignore a trailing slash. A filter applies if either spelling matches,
 * so no spelling of a path reaches its handler, here or behind a gateway, while its filters look away.
 */
final class PathSpellings {

	private PathSpellings() {
	}

	/**
	 * Return the path, and its cleaned-up spelling when that differs.
	 * @param path the path within the application, as sent
	 * @return one or two spellings, the path as sent first
	 */
	static List<PathContainer> of(PathContainer path) {
		String text = path.value();
		if (text.indexOf('%') < 0 && text.indexOf(';') < 0 && !text.contains("//") && !text.contains("/.")
				&& !(text.length() > 1 && text.endsWith("/"))) {
			return List.of(path);
		}
		PathContainer cleaned = PathContainer.parsePath(cleanUp(path));
		return cleaned.value().equals(text) ? List.of(path) : List.of(path, cleaned);
	}

	/**
	 * Decoded segments without their parameters, split at encoded separators too, with empty and {@code .} segments
	 * dropped and {@code ..} resolved, re-encoded so that nothing is decoded twice; no trailing slash.
	 */
	private static String cleanUp(PathContainer path) {
		Deque<String> segments = new ArrayDeque<>();
		for (PathContainer.Element element : path.elements()) {
			if (element instanceof PathContainer.PathSegment segment) {
				for (String part : segment.valueToMatch().split("[/\\\\]")) {
					if ("..".equals(part)) {
						segments.pollLast();
					}
					else if (!part.isEmpty() && !".".equals(part)) {
						segments.addLast(part);
					}
				}
			}
		}
		if (segments.isEmpty()) {
			return "/";
		}
		StringBuilder cleaned = new StringBuilder(path.value().length());
		for (String segment : segments) {
			// ';' too, which a segment may hold unencoded: a decoded %3B must not start path parameters when parsed.
			cleaned.append('/').append(UriUtils.encodePathSegment(segment, StandardCharsets.UTF_8).replace(";", "%3B"));
		}
		return cleaned.toString();
	}

}
