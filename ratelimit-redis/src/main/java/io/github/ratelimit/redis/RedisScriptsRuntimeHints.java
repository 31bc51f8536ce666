package io.github.ratelimit.redis;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * The Lua scripts the Redis store reads from the classpath, for native images (registered in
 * {@code META-INF/spring/aot.factories}).
 */
class RedisScriptsRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern("io/github/ratelimit/redis/*.lua");
	}

}
