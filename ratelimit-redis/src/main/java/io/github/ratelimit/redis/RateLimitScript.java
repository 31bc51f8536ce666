package io.github.ratelimit.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;

import io.github.ratelimit.Algorithm;
import org.jspecify.annotations.Nullable;

/**
 * A Lua script and its SHA-1 for EVALSHA: per algorithm, the shared prelude followed by the algorithm's body; and
 * the script that decides several policies of one request together; and the one that tracks the parameters a
 * policy is decided with.
 *
 * @param name the script's file name
 * @param source the script
 * @param sha1 the SHA-1 of the script, in lowercase hex
 */
record RateLimitScript(String name, byte[] source, String sha1) {

	private static final Map<Algorithm, RateLimitScript> scripts = load();

	/** Decides one request of several policies, all or nothing, or gives units back: see all-or-nothing.lua. */
	static final RateLimitScript ALL_OR_NOTHING = of("all-or-nothing.lua",
			read("all-or-nothing.lua").getBytes(StandardCharsets.UTF_8));

	/** Says which parameters this instance decides a policy with, and which others are live: see policy-versions.lua. */
	static final RateLimitScript POLICY_VERSIONS = of("policy-versions.lua",
			read("policy-versions.lua").getBytes(StandardCharsets.UTF_8));

	/**
	 * Return the name the all-or-nothing script (and the policy versions' fields) give an algorithm: one per state
	 * layout, so the two buckets, one meter, share theirs.
	 */
	static String code(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED -> "f";
			case SLIDING_LOG -> "l";
			// A sliding log's layout (its slots are the log's entries), under keys of its own.
			case CONCURRENCY -> "h";
			case SLIDING_COUNTER -> "c";
			case TOKEN_BUCKET, LEAKY_BUCKET -> "b";
		};
	}

	/**
	 * Return the algorithm of a {@linkplain #code(Algorithm) code} (the token bucket for the buckets' one), or
	 * {@code null} for no code of this version.
	 */
	static @Nullable Algorithm algorithmOf(String code) {
		return switch (code) {
			case "f" -> Algorithm.FIXED;
			case "l" -> Algorithm.SLIDING_LOG;
			case "h" -> Algorithm.CONCURRENCY;
			case "c" -> Algorithm.SLIDING_COUNTER;
			case "b" -> Algorithm.TOKEN_BUCKET;
			default -> null;
		};
	}

	static RateLimitScript of(Algorithm algorithm) {
		return Objects.requireNonNull(scripts.get(algorithm)); // every algorithm is loaded
	}

	static Iterable<RateLimitScript> all() {
		List<RateLimitScript> all = new ArrayList<>(scripts.values());
		all.add(ALL_OR_NOTHING);
		all.add(POLICY_VERSIONS);
		return all;
	}

	private static RateLimitScript of(String name, byte[] source) {
		return new RateLimitScript(name, source, sha1(source));
	}

	private static Map<Algorithm, RateLimitScript> load() {
		String prelude = read("prelude.lua");
		Map<Algorithm, RateLimitScript> scripts = new EnumMap<>(Algorithm.class);
		for (Algorithm algorithm : Algorithm.values()) {
			byte[] source = (prelude + read(fileName(algorithm))).getBytes(StandardCharsets.UTF_8);
			scripts.put(algorithm, of(fileName(algorithm), source));
		}
		return scripts;
	}

	static String fileName(Algorithm algorithm) {
		return switch (algorithm) {
			case FIXED -> "fixed-window.lua";
			case SLIDING_LOG, CONCURRENCY -> "sliding-log.lua";
			case SLIDING_COUNTER -> "sliding-counter.lua";
			// One meter seen from two sides (tokens left, or level poured): the same decisions, one script.
			case TOKEN_BUCKET, LEAKY_BUCKET -> "token-bucket.lua";
		};
	}

	private static String read(String name) {
		try (InputStream in = RateLimitScript.class.getResourceAsStream(name)) {
			if (in == null) {
				throw new IllegalStateException("Lua script " + name + " is missing from the classpath");
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static String sha1(byte[] source) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(source));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-1 is required of every Java platform", ex);
		}
	}

}
