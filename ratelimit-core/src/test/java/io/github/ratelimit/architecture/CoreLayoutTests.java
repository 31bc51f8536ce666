package io.github.ratelimit.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import org.junit.jupiter.api.Test;

class CoreLayoutTests {

	private final JavaClasses core = LayoutRules.productionClasses("io.github.ratelimit");

	@Test
	void theCoreDependsOnTheJdkAndJSpecifyOnly() {
		LayoutRules.coreDependsOnTheJdkAndJSpecifyOnly().check(this.core);
	}

	@Test
	void theCoreHasNoPackageCycles() {
		LayoutRules.noPackageCycles().check(this.core);
	}

}
