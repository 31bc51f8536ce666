package io.github.ratelimit.redis;

import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Says once, at ERROR, when the Redis server is older than the scripts need. It cannot fail the start-up: Redis may
 * well be down then, and a rate limiter must start without it.
 */
final class RedisVersionCheck {

	/** The fixed window's script uses {@code PEXPIRE ... NX}, new in Redis 7.0. */
	static final int REQUIRED_MAJOR = 7;

	private static final Log logger = LogFactory.getLog(RedisRateLimitStore.class);

	private final AtomicBoolean done = new AtomicBoolean();

	/**
	 * Return whether no version was checked yet.
	 */
	boolean pending() {
		return !this.done.get();
	}

	/**
	 * Check the {@code redis_version} of an {@code INFO server} reply, once per store.
	 * @param info the reply's text
	 */
	void checkInfo(@Nullable String info) {
		check(versionOf(info));
	}

	/**
	 * Check a server version such as {@code 7.0.15}, once per store.
	 * @param version the version, or {@code null} if the reply had none (it is not asked again)
	 */
	void check(@Nullable String version) {
		if (this.done.compareAndSet(false, true) && version != null) {
			String problem = problem(version);
			if (problem != null) {
				logger.error(problem);
			}
		}
	}

	/**
	 * Return what is wrong with a server version, or {@code null} if it is recent enough or cannot be read (an
	 * unknown version is no reason to cry wolf).
	 */
	static @Nullable String problem(String version) {
		int dot = version.indexOf('.');
		String major = (dot > 0) ? version.substring(0, dot) : version;
		try {
			if (Integer.parseInt(major.trim()) >= REQUIRED_MAJOR) {
				return null;
			}
		}
		catch (NumberFormatException ex) {
			return null;
		}
		return "Redis " + version + " is older than " + REQUIRED_MAJOR + ".0, which the rate limit scripts need "
				+ "(PEXPIRE ... NX): FIXED window decisions will fail and go to the failure mode. Upgrade Redis (or use "
				+ "Valkey).";
	}

	static @Nullable String versionOf(@Nullable String info) {
		if (info == null) {
			return null;
		}
		for (String line : info.split("\r?\n")) {
			if (line.startsWith("redis_version:")) {
				return line.substring("redis_version:".length()).trim();
			}
		}
		return null;
	}

}
