package io.github.ratelimit.redis;

import java.util.Objects;

import io.github.ratelimit.test.RedisServer;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A Redis server of a test class's own, and a Lettuce connection to it: started before its first test, stopped after
 * its last. Register it as a static field: {@code @RegisterExtension static final StandaloneRedis redis = ...}.
 */
final class StandaloneRedis implements BeforeAllCallback, AfterAllCallback {

	private RedisServer server;

	private LettuceConnectionFactory connectionFactory;

	@Override
	public void beforeAll(ExtensionContext context) {
		this.server = RedisServer.start();
		this.connectionFactory = RedisConnections.standalone(this.server);
	}

	@Override
	public void afterAll(ExtensionContext context) {
		this.connectionFactory.destroy();
		this.server.close();
	}

	/** The server, to pause, inspect or send commands to. */
	RedisServer server() {
		return Objects.requireNonNull(this.server, "started before the class's first test");
	}

	/** The connection factory a store under test is built on. */
	LettuceConnectionFactory connectionFactory() {
		return Objects.requireNonNull(this.connectionFactory, "started before the class's first test");
	}

}
