package io.github.ratelimit.redis;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RedisVersionCheckTests {

	@Test
	void aRedisOlderThanSevenIsNamedWithWhatFails() {
		assertThat(RedisVersionCheck.problem("6.2.14")).contains("Redis 6.2.14", "7.0", "PEXPIRE ... NX", "FIXED");
	}

	@Test
	void redisSevenAndLaterAndValkeyPass() {
		assertThat(RedisVersionCheck.problem("7.0.0")).isNull();
		assertThat(RedisVersionCheck.problem("7.0.15")).isNull();
		assertThat(RedisVersionCheck.problem("7.2.4")).isNull(); // what Valkey reports
		assertThat(RedisVersionCheck.problem("8.2.1")).isNull();
	}

	@Test
	void anUnreadableVersionRaisesNoAlarm() {
		assertThat(RedisVersionCheck.problem("unknown")).isNull();
		assertThat(RedisVersionCheck.versionOf(null)).isNull();
		assertThat(RedisVersionCheck.versionOf("# Server\r\nredis_mode:standalone\r\n")).isNull();
	}

	@Test
	void theVersionIsReadFromAnInfoServerReply() {
		String info = "# Server\r\nredis_version:7.0.15\r\nredis_git_sha1:00000000\r\n";
		assertThat(RedisVersionCheck.versionOf(info)).isEqualTo("7.0.15");
	}

}
