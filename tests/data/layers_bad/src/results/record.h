// Only marks results/ as a module for the layering check test.
#pragma once
