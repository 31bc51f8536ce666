package io.github.ratelimit.test;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisServerTests {

	@Test
	void spawnedServerAnswersAndIsGoneAfterClose() {
		int port;
		try (RedisServer server = RedisServer.spawn()) {
			port = server.port();
			assertThat(server.call("SET", "a", "1")).isEqualTo("OK");
			assertThat(server.call("GET", "a")).isEqualTo("1");
		}
		assertThat(Ports.isFree(port)).isTrue();
	}

	@Test
	void killedServerCanBeRestartedEmptyOnTheSamePort() {
		try (RedisServer server = RedisServer.spawn()) {
			server.call("SET", "a", "1");
			server.kill();
			assertThat(server.answersPing()).isFalse();
			server.restart();
			assertThat(server.answersPing()).isTrue();
			assertThat(server.call("GET", "a")).isNull();
		}
	}

	@Test
	void countsCommandCalls() {
		try (RedisServer server = RedisServer.spawn()) {
			server.resetStats();
			server.call("SET", "a", "1");
			server.call("SET", "b", "1");
			assertThat(server.commandCalls("set")).isEqualTo(2);
			server.pause(Duration.ofMillis(1));
		}
	}

	@Test
	void clusterOfThreeMastersServesEverySlot() {
		try (RedisCluster cluster = RedisCluster.start(3)) {
			assertThat(cluster.nodes()).hasSize(3);
			assertThat(cluster.nodeAddresses().split(",")).hasSize(3);
			String info = String.valueOf(cluster.nodes().get(0).call("CLUSTER", "INFO"));
			assertThat(info).contains("cluster_state:ok").contains("cluster_known_nodes:3");
		}
	}

}
