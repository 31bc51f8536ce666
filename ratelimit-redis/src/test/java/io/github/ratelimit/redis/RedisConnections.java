package io.github.ratelimit.redis;

import java.util.Arrays;

import io.github.ratelimit.test.RedisCluster;
import io.github.ratelimit.test.RedisServer;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Connection factories on the test servers, built as Spring Boot would.
 */
public final class RedisConnections {

	private RedisConnections() {
	}

	public static LettuceConnectionFactory standalone(RedisServer server) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	public static JedisConnectionFactory jedis(RedisServer server) {
		JedisConnectionFactory factory = new JedisConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	public static LettuceConnectionFactory cluster(RedisCluster cluster) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(Arrays.asList(cluster.nodeAddresses().split(","))));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

}
